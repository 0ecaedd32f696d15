package io.rdmareactive.rdma.loop;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * Tells BlockHound (when an application installs it) that the completion event loops
 * ({@code rdma-cq-N}, non-blocking threads) may block in exactly one place: waiting on their
 * completion channel, or in a busy-polling loop's idle strategy. Anything else that blocks there, such as a subscriber sleeping in
 * {@code onNext}, is still reported. Loaded by BlockHound through ServiceLoader only.
 */
public final class RdmaBlockHoundIntegration implements BlockHoundIntegration {
  @Override
  public void applyTo(BlockHound.Builder builder) {
    builder.allowBlockingCallsInside("io.rdmareactive.rdma.loop.CompletionEventLoop", "awaitEvent");
    // A busy-polling loop's idle strategy may park between empty rounds (back-off, park).
    builder.allowBlockingCallsInside("io.rdmareactive.rdma.loop.PollSpin", "idle");
    // A busy loop without demand parks until a request or a task wakes it.
    builder.allowBlockingCallsInside("io.rdmareactive.rdma.loop.CompletionEventLoop", "awaitDemand");
  }
}
