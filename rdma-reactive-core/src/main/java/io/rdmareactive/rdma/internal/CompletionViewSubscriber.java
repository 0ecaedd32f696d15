package io.rdmareactive.rdma.internal;

import io.rdmareactive.rdma.verbs.WorkCompletion;
import io.rdmareactive.rdma.verbs.WorkCompletionView;

/**
 * Not API: a completion-stream subscriber that copies each completion out of the provider's view
 * itself, so that the stream allocates no {@link WorkCompletion} per item (the transport's
 * connections are one). The stream then calls {@link #copyCompletion} for each polled completion
 * and {@link #onCompletions} once per poll instead of {@code onNext}; demand counts completions
 * as before. Other subscribers get records through {@code onNext}.
 */
public interface CompletionViewSubscriber extends reactor.core.CoreSubscriber<WorkCompletion> {
  /**
   * Copies what it needs of one completion. Called on the polling thread while the CQ is being
   * polled (under the stream's monitor): must not signal anyone, block, or touch the CQ.
   */
  void copyCompletion(WorkCompletionView view);

  /** The {@code count} completions copied since the last call are ready; a signal like onNext. */
  void onCompletions(int count);
}
