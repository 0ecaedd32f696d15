package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.verbs.IdleStrategy;
import io.rdmareactive.rdma.verbs.CompletionStreamOptions;

/**
 * How connections wait for completions, shared by the connections of a server or client (the role
 * Reactor Netty's LoopResources play). The default waits on each connection's completion channel
 * from its event-loop thread ({@code rdma-cq-N}); {@link #busyPoll} trades one spinning thread per
 * connection ({@code rdma-poll-N}) for latency.
 */
public final class RdmaResources {
  private static final RdmaResources DEFAULT = new RdmaResources(CompletionStreamOptions.defaults()
      .withMode(CompletionStreamOptions.Mode.EVENT));

  private final CompletionStreamOptions options;

  private RdmaResources(CompletionStreamOptions options) {
    this.options = options;
  }

  /** Event-driven completions, batches of 32. */
  public static RdmaResources defaults() {
    return DEFAULT;
  }

  /** Completion streams with exactly these options (failOnError is ignored: connections handle statuses). */
  public static RdmaResources of(CompletionStreamOptions options) {
    return new RdmaResources(options.withFailOnError(false));
  }

  /** Busy-polling completions with {@code idleStrategy} between empty polls. */
  public static RdmaResources busyPoll(IdleStrategy idleStrategy) {
    return of(CompletionStreamOptions.defaults().withMode(CompletionStreamOptions.Mode.BUSY_POLL)
        .withIdleStrategy(idleStrategy));
  }

  CompletionStreamOptions completionOptions() {
    return options;
  }

  @Override
  public String toString() {
    return "RdmaResources" + options;
  }
}
