package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.RdmaException;
import io.rdmareactive.rdma.loop.CompletionEventLoop;
import io.rdmareactive.rdma.loop.CompletionHandler;
import io.rdmareactive.rdma.loop.CompletionRegistration;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import io.rdmareactive.rdma.verbs.WorkCompletionView;
import org.jspecify.annotations.Nullable;

/**
 * A connection's completion handler on its loop: the loop polls the connection's CQ and hands
 * each completion here, which copies it into the {@link CompletionRing} (no object per
 * completion), then, once per poll, runs the connection's drain, there on the loop, as Reactor
 * Netty's handler calls {@code onInboundNext}. No stream, no subscription in between.
 */
final class CompletionIntake implements CompletionHandler {
  private final ConnectionOperations connection;
  private final CompletionRing ring;
  private final ConnectionCloser closer;
  private volatile @Nullable CompletionRegistration registration;

  CompletionIntake(ConnectionOperations connection, CompletionRing ring, ConnectionCloser closer) {
    this.connection = connection;
    this.ring = ring;
    this.closer = closer;
  }

  /** Starts taking {@code cq}'s completions on {@code loop}. */
  void register(CompletionEventLoop loop, CompletionQueue cq, int batch) {
    CompletionRegistration r = loop.register(cq, this, batch);
    if (r == null) {
      throw new IllegalStateException(loop + " has stopped");
    }
    registration = r;
  }

  /** Any thread: stops taking completions (closing, or a failed open); the CQ is free when this returns. */
  void cancel() {
    CompletionRegistration r = registration;
    if (r != null) {
      r.cancel();
    }
  }

  /** On the loop: polls the CQ now (a deadline that finds the loop behind); false elsewhere. */
  boolean pollNow() {
    CompletionRegistration r = registration;
    return r != null && r.pollNow();
  }

  @Override
  public long demand() {
    return Long.MAX_VALUE; // the ring holds every outstanding work request's completion
  }

  @Override
  public void onCompletion(WorkCompletionView view) {
    WorkCompletion.Status status = view.status();
    if (!ring.offer(view.wrId(), status,
        CompletionDispatcher.checkedLength(view.wrId(), status, view.opcode(), view.byteLength()), view.hasImmediate(), view.immediateData(),
        status == WorkCompletion.Status.SUCCESS ? null : view.toWorkCompletion())) {
      // More completions than work requests: a provider bug. Fail rather than lose or reorder one.
      connection.fail(new RdmaException("completion ring overflow on " + connection
          + ": more completions than work requests"));
    }
  }

  @Override
  public void onCompletions(int count) {
    ring.publish();
    connection.drain();
  }

  @Override
  public void onError(Throwable t) {
    closer.completionsEnded();
    connection.fail(new RdmaException("the completion queue of " + connection + " failed", t));
    connection.drain();
  }
}
