package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.memory.MessageMemory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;

/**
 * A message read in place from one of a connection's receive buffers. It holds one count on that
 * buffer ({@link RegisteredBuffers#retain}); its release, from any thread, drops it, and the
 * buffer goes back to the connection's drain when no count is left.
 *
 * <p>Reads stay inside the message's lifetime: copies ({@link #toByteArray}, {@link
 * #asByteBuffer}, a send of the message) take a count of their own for as long as they copy, so a
 * release racing them cannot hand the buffer to the peer's next message underneath; and
 * {@link #segment()} is a zero-copy view scoped to the message, which fails with {@link
 * IllegalStateException} once the message is released. That scope is a shared arena of its own,
 * made on the first call and closed by the release: about 8 µs per message that uses it
 * (measured on the host), paid only by callers of {@code segment()}.
 */
final class ReceivedView implements RdmaMessage {
  private static final VarHandle RELEASED;
  private static final VarHandle SCOPE;
  /** In {@link #scope} once released: no scope may be made any more. */
  private static final Object GONE = new Object();

  static {
    try {
      MethodHandles.Lookup l = MethodHandles.lookup();
      RELEASED = l.findVarHandle(ReceivedView.class, "released", int.class);
      SCOPE = l.findVarHandle(ReceivedView.class, "scope", Object.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
    MessageMemory.install(m -> m instanceof ReceivedView v ? v.unscoped() : null);
  }

  private final ConnectionOperations owner;
  private final RegisteredBuffers buffers;
  final int index;
  /** Where the message starts in its buffer: 0, or its place in a batch. */
  final int start;
  private final int length;
  @SuppressWarnings("unused") // through RELEASED: a field, not an AtomicBoolean, one object less per message
  private volatile int released;
  /** Null, the Arena scoping {@link #segment()}, or {@link #GONE}; through SCOPE. */
  @SuppressWarnings("unused")
  private volatile Object scope;

  /**
   * A view over {@code length} bytes at {@code start} in receive buffer {@code index}, holding a
   * count on it ({@link RegisteredBuffers#viewCreated}).
   */
  ReceivedView(ConnectionOperations owner, RegisteredBuffers buffers, int index, int start, int length) {
    this.owner = owner;
    this.buffers = buffers;
    this.index = index;
    this.start = start;
    this.length = length;
    buffers.viewCreated(index);
    owner.counters().messageHeld();
  }

  @Override
  public int length() {
    return length;
  }

  @Override
  public MemorySegment segment() {
    Object s = scope;
    if (s == null) {
      Arena a = Arena.ofShared();
      if (SCOPE.compareAndSet(this, null, a)) {
        s = a;
      } else {
        a.close();
        s = scope;
      }
    }
    if (s == GONE) {
      throw new IllegalStateException("message already released");
    }
    // The count this view holds keeps the memory alive and the buffer unposted until release(),
    // which closes the scope before it drops the count.
    return unscoped().reinterpret((Arena) s, null).asReadOnly();
  }

  /**
   * The message's memory without a scope of its own: valid only while the caller holds a count
   * (this view unreleased, or a {@link #retain()}), which it must check itself before each read.
   */
  MemorySegment unscoped() {
    if (isReleased()) {
      throw new IllegalStateException("message already released");
    }
    return buffers.receiveMemory(index).asSlice(buffers.receiveOffset(index) + start, length).asReadOnly();
  }

  /** A copy, made under a count of its own: a release racing it cannot recycle the buffer underneath. */
  @Override
  public byte[] toByteArray() {
    byte[] copy = new byte[length];
    copyTo(0, MemorySegment.ofArray(copy), 0, length);
    return copy;
  }

  /**
   * A read-only copy on the heap: a direct buffer over the receive buffer would let code that
   * reads by address (Netty's Unsafe-based buffers, a native writev) read it after the release,
   * when it may hold the peer's next message. The copy costs about what the scope of
   * {@link #segment()} costs at 16 KiB, and far less below.
   */
  @Override
  public ByteBuffer asByteBuffer() {
    return ByteBuffer.wrap(toByteArray()).asReadOnlyBuffer();
  }

  /** Copies {@code n} bytes at {@code from} into {@code to} at {@code at}, holding a count meanwhile. */
  void copyTo(long from, MemorySegment to, long at, long n) {
    if (!retain()) {
      throw new IllegalStateException("message already released");
    }
    try {
      MemorySegment.copy(buffers.receiveMemory(index), ValueLayout.JAVA_BYTE, buffers.receiveOffset(index) + start + from, to,
          ValueLayout.JAVA_BYTE, at, n);
    } finally {
      unref();
    }
  }

  /** One more count on the buffer, for as long as a reader needs it; false once the message is released. */
  boolean retain() {
    return !isReleased() && buffers.retain(index);
  }

  /** Drops a count taken with {@link #retain()}. */
  void unref() {
    if (buffers.unref(index)) {
      owner.drain();
    }
  }

  boolean isReleased() {
    return (int) RELEASED.getVolatile(this) != 0;
  }

  boolean belongsTo(ConnectionOperations connection) {
    return connection == owner;
  }

  @Override
  public void release() {
    if (RELEASED.compareAndSet(this, 0, 1)) {
      owner.counters().messageLetGo();
      Object s = SCOPE.getAndSet(this, GONE);
      if (s instanceof Arena a) {
        try {
          a.close();
        } catch (IllegalStateException e) {
          // A native call holds the segment (the JDK refuses to close under it): keep the buffer
          // out of the receive queue for good rather than hand it to the peer under that call.
          return;
        }
      }
      unref();
    }
  }
}
