package io.rdmareactive.rdma.verbs;

/** A flyweight over one polled completion (struct ibv_wc); copy with {@link #toWorkCompletion()} to keep it. */
public interface WorkCompletionView {
  long wrId();

  WorkCompletion.Status status();

  WorkCompletion.Opcode opcode();

  int vendorError();

  int byteLength();

  /** Immediate data in host order; meaningful when {@link #hasImmediate()}. */
  int immediateData();

  boolean hasImmediate();

  int qpNumber();

  int sourceQp();

  default WorkCompletion toWorkCompletion() {
    return new WorkCompletion(wrId(), status(), opcode(), vendorError(), byteLength(),
        immediateData(), hasImmediate(), qpNumber(), sourceQp());
  }
}
