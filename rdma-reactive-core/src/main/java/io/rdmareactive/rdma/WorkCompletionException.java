package io.rdmareactive.rdma;

import io.rdmareactive.rdma.verbs.WorkCompletion;

/** A work request completed with an error status. */
public class WorkCompletionException extends RdmaException {
  private static final long serialVersionUID = 1L;
  private final transient WorkCompletion completion;

  /** The failed work completion (its status is not SUCCESS). */
  public WorkCompletionException(WorkCompletion completion) {
    super("work request " + completion.wrId() + " (" + completion.opcode() + ") failed: "
        + completion.status() + ", vendor error 0x" + Integer.toHexString(completion.vendorError()));
    this.completion = completion;
  }

  /** The failed completion: its status and vendor error say why. */
  public WorkCompletion completion() {
    return completion;
  }
}
