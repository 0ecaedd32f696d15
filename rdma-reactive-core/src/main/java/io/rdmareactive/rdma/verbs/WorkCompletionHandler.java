package io.rdmareactive.rdma.verbs;

/** Receives polled completions one by one; the view is reused and valid only during the call. */
@FunctionalInterface
public interface WorkCompletionHandler {
  void onCompletion(WorkCompletionView completion);
}
