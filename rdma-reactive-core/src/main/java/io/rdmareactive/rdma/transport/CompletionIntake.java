package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.RdmaException;
import io.rdmareactive.rdma.internal.CompletionViewSubscriber;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import io.rdmareactive.rdma.verbs.WorkCompletionView;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.util.context.Context;

/**
 * A channel's subscriber to its completion stream: copies each completion into the
 * {@link CompletionRing} (no object per completion) and wakes the drain. Runs on the completion
 * stream's thread, one signal at a time.
 */
final class CompletionIntake implements CompletionViewSubscriber {
  private final ConnectionOperations channel;
  private final CompletionRing ring;
  private final ConnectionCloser closer;
  private volatile @Nullable Subscription subscription;

  CompletionIntake(ConnectionOperations channel, CompletionRing ring, ConnectionCloser closer) {
    this.channel = channel;
    this.ring = ring;
    this.closer = closer;
  }

  /** Any thread: stops the stream (closing, or a failed open). */
  void cancel() {
    Subscription s = subscription;
    if (s != null) {
      s.cancel();
    }
  }

  @Override
  public void onSubscribe(Subscription s) {
    subscription = s;
    s.request(Long.MAX_VALUE);
  }

  /** A plain completion stream's record (the stream normally uses the view path below). */
  @Override
  public void onNext(WorkCompletion wc) {
    if (enqueue(wc.wrId(), wc.status(), CompletionDispatcher.checkedLength(wc.wrId(), wc.status(), wc.opcode(),
        wc.byteLength()), wc.hasImmediate(), wc.immediateData(), wc)) {
      ring.publish();
    }
    channel.drain();
  }

  @Override
  public void copyCompletion(WorkCompletionView view) {
    WorkCompletion.Status status = view.status();
    enqueue(view.wrId(), status, CompletionDispatcher.checkedLength(view.wrId(), status, view.opcode(), view.byteLength()),
        view.hasImmediate(), view.immediateData(), status == WorkCompletion.Status.SUCCESS ? null : view.toWorkCompletion());
  }

  @Override
  public void onCompletions(int count) {
    ring.publish();
    channel.drain();
  }

  /** Producer side of the ring: the completion stream's thread, one at a time. */
  private boolean enqueue(long wrId, WorkCompletion.Status status, int length, boolean hasImmediate, int immediate,
      @Nullable WorkCompletion failed) {
    if (ring.offer(wrId, status, length, hasImmediate, immediate, failed)) {
      return true;
    }
    // More completions than work requests: a provider bug. Fail rather than lose or reorder one.
    channel.fail(new RdmaException("completion ring overflow on " + channel
        + ": more completions than work requests"));
    return false;
  }

  @Override
  public void onError(Throwable t) {
    closer.completionsEnded();
    channel.fail(new RdmaException("the completion stream of " + channel + " failed", t));
    channel.drain();
  }

  @Override
  public void onComplete() {
    closer.completionsEnded();
    channel.drain();
  }

  @Override
  public Context currentContext() {
    return Context.empty();
  }
}
