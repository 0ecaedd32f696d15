package io.rdmareactive.rdma.verbs;

/** Receives polled completions one by one; the view is reused and valid only during the call. */
@FunctionalInterface
public interface WorkCompletionHandler {
  /** Handles one completion; {@code completion} is valid only during this call. */
  void onCompletion(WorkCompletionView completion);
}
