package io.rdmareactive.rdma.loop;

import io.rdmareactive.rdma.verbs.WorkCompletionHandler;
import io.rdmareactive.rdma.verbs.WorkCompletionView;

/**
 * What a loop hands one CQ's completions to ({@link CompletionEventLoop#register}): a verbs
 * completion stream, or a transport connection itself. The loop calls {@link #onCompletion} for
 * each completion while it polls the CQ (under the registration's monitor: copy, signal no one,
 * block on nothing), then {@link #onCompletions} once per poll, outside it, where user code may
 * run. Either may throw: that costs this registration only, never the loop.
 */
public interface CompletionHandler extends WorkCompletionHandler {
  /** Copies what it needs of one completion; the view is valid only during the call. */
  @Override
  void onCompletion(WorkCompletionView completion);

  /** The {@code count} completions copied since the last call are ready. Loop thread. */
  void onCompletions(int count);

  /** How many completions it takes now; 0 leaves them in the CQ until {@link CompletionRegistration#requestDrain()}. */
  long demand();

  /** The registration ended with {@code error} (the CQ or the loop failed, or the loop stopped): no more come. */
  void onError(Throwable error);
}
