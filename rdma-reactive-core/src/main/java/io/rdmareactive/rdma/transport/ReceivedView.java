package io.rdmareactive.rdma.transport;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A message read in place from one of a channel's receive buffers; its release, from any thread,
 * hands the buffer back to the channel's drain.
 */
final class ReceivedView implements RdmaMessage {
  private static final VarHandle RELEASED;

  static {
    try {
      RELEASED = MethodHandles.lookup().findVarHandle(ReceivedView.class, "released", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final ConnectionOperations owner;
  private final RegisteredBuffers buffers;
  final int index;
  private final int length;
  @SuppressWarnings("unused") // through RELEASED: a field, not an AtomicBoolean, one object less per message
  private volatile int released;

  ReceivedView(ConnectionOperations owner, RegisteredBuffers buffers, int index, int length) {
    this.owner = owner;
    this.buffers = buffers;
    this.index = index;
    this.length = length;
  }

  @Override
  public int length() {
    return length;
  }

  @Override
  public MemorySegment segment() {
    if (isReleased()) {
      throw new IllegalStateException("message already released");
    }
    return buffers.receiveMemory(index).asSlice(buffers.offset(index), length).asReadOnly();
  }

  boolean isReleased() {
    return (int) RELEASED.getVolatile(this) != 0;
  }

  boolean belongsTo(ConnectionOperations channel) {
    return channel == owner;
  }

  @Override
  public void release() {
    if (RELEASED.compareAndSet(this, 0, 1)) {
      buffers.markReleased(index);
      owner.drain();
    }
  }
}
