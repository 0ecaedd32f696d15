package io.rdmareactive.rdma.inmemory;

import io.rdmareactive.rdma.verbs.WorkCompletion;
import io.rdmareactive.rdma.verbs.WorkCompletionView;
import org.jspecify.annotations.Nullable;

/** One completion in an in-memory CQ; immutable, so it is its own view. */
final class MemWorkCompletion implements WorkCompletionView {
  final long wrId;
  final WorkCompletion.Status status;
  final WorkCompletion.Opcode opcode;
  final int byteLength;
  final int immediateData;
  final boolean hasImmediate;
  final int qpNumber;
  final int sourceQp;
  final boolean solicited;
  /** Whose work-queue slot this completion holds until polled; null when it holds none. */
  final @Nullable Slots slots;
  /**
   * How many of those slots its poll gives back: its own and those of the unsignaled sends before
   * it that completed silently (verbs semantics: they hold their slots until a later completion
   * of the queue is polled).
   */
  int heldSlots = 1;

  MemWorkCompletion(long wrId, WorkCompletion.Status status, WorkCompletion.Opcode opcode, int byteLength,
      int immediateData, boolean hasImmediate, int qpNumber, int sourceQp, boolean solicited, @Nullable Slots slots) {
    this.wrId = wrId;
    this.status = status;
    this.opcode = opcode;
    this.byteLength = byteLength;
    this.immediateData = immediateData;
    this.hasImmediate = hasImmediate;
    this.qpNumber = qpNumber;
    this.sourceQp = sourceQp;
    this.solicited = solicited;
    this.slots = slots;
  }

  @Override public long wrId() { return wrId; }
  @Override public WorkCompletion.Status status() { return status; }
  @Override public WorkCompletion.Opcode opcode() { return opcode; }
  @Override public int vendorError() { return status == WorkCompletion.Status.SUCCESS ? 0 : 0x80 + status.ordinal(); }
  @Override public int byteLength() { return byteLength; }
  @Override public int immediateData() { return immediateData; }
  @Override public boolean hasImmediate() { return hasImmediate; }
  @Override public int qpNumber() { return qpNumber; }
  @Override public int sourceQp() { return sourceQp; }

  /** A work queue's occupancy: slots are taken when posting and given back when the completion is polled. */
  static final class Slots {
    final int capacity;
    int used; // guarded by fabric.lock

    Slots(int capacity) {
      this.capacity = capacity;
    }

    boolean full() {
      return used >= capacity;
    }
  }
}
