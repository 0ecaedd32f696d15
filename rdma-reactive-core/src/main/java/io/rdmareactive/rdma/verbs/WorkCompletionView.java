package io.rdmareactive.rdma.verbs;

/** A flyweight over one polled completion (struct ibv_wc); copy with {@link #toWorkCompletion()} to keep it. */
public interface WorkCompletionView {
  /** The id of the work request that completed. */
  long wrId();

  /** How it completed. */
  WorkCompletion.Status status();

  /** What completed (meaningful only when the status is SUCCESS). */
  WorkCompletion.Opcode opcode();

  /** The device's own error code, for failed completions. */
  int vendorError();

  /** Bytes received (receives only). */
  int byteLength();

  /** Immediate data in host order; meaningful when {@link #hasImmediate()}. */
  int immediateData();

  /** Whether immediate data came with the message. */
  boolean hasImmediate();

  /** The local queue pair the request was posted on. */
  int qpNumber();

  /** The sending queue pair (UD receives only). */
  int sourceQp();

  /** A copy detached from native memory, valid after the handler returns. */
  default WorkCompletion toWorkCompletion() {
    return new WorkCompletion(wrId(), status(), opcode(), vendorError(), byteLength(),
        immediateData(), hasImmediate(), qpNumber(), sourceQp());
  }
}
