package io.rdmareactive.rsocket;

import io.netty.buffer.AbstractReferenceCountedByteBuf;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.rdmareactive.rdma.memory.MessageMemory;
import io.rdmareactive.rdma.transport.RdmaMessage;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.ReadOnlyBufferException;
import java.nio.channels.FileChannel;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.ScatteringByteChannel;
import org.jspecify.annotations.Nullable;

/**
 * A read-only {@link ByteBuf} over a received {@link RdmaMessage}, without a copy. It holds the
 * message unreleased for as long as any of its references lives, which keeps the receive buffer
 * out of the receive queue and its memory allocated even past the connection's close (the
 * transport frees a closed connection's memory with the last view over it), and its final
 * {@link #release()} releases the message, giving the buffer back (and its credit to the peer).
 * Slices and duplicates share its reference count.
 *
 * <p>Every read goes through its accessors, which check its reference count first (Netty's
 * {@code ensureAccessible}): a read after the release fails with {@link IllegalStateException}
 * ({@code IllegalReferenceCountException}). Nothing of it reaches code that reads by address:
 * {@link #hasMemoryAddress()} and {@link #isDirect()} are false and {@link #nioBuffer} returns a
 * copy on the heap, so Netty's transports (epoll's writev included) copy a frame into their own
 * direct buffer when it is written, while it is still referenced, rather than gather its address
 * for a write that may run after its release. That copy is one memcpy per frame written to a
 * Netty channel; reads by RSocket itself stay in place.
 */
final class SegmentByteBuf extends AbstractReferenceCountedByteBuf {
  private static final ValueLayout.OfShort SHORT_BE = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
  private static final ValueLayout.OfShort SHORT_LE = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfInt INT_BE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
  private static final ValueLayout.OfInt INT_LE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfLong LONG_BE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
  private static final ValueLayout.OfLong LONG_LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  private final ByteBufAllocator alloc;
  private final RdmaMessage message;
  private final MemorySegment segment;
  private final int length;

  SegmentByteBuf(ByteBufAllocator alloc, RdmaMessage message) {
    super(message.length());
    this.alloc = alloc;
    this.message = message;
    MemorySegment unscoped = MessageMemory.unscoped(message); // the checks are this ByteBuf's own: see the class comment
    this.segment = unscoped != null ? unscoped : message.segment();
    this.length = message.length();
    setIndex(0, length);
  }

  @Override
  protected void deallocate() {
    message.release();
  }

  private ByteBuffer view(int index, int len) {
    return segment.asSlice(index, len).asByteBuffer();
  }

  // ---- reads ----------------------------------------------------------------------------------

  @Override
  protected byte _getByte(int index) {
    return segment.get(ValueLayout.JAVA_BYTE, index);
  }

  @Override
  protected short _getShort(int index) {
    return segment.get(SHORT_BE, index);
  }

  @Override
  protected short _getShortLE(int index) {
    return segment.get(SHORT_LE, index);
  }

  @Override
  protected int _getUnsignedMedium(int index) {
    return (_getByte(index) & 0xff) << 16 | (_getByte(index + 1) & 0xff) << 8 | _getByte(index + 2) & 0xff;
  }

  @Override
  protected int _getUnsignedMediumLE(int index) {
    return _getByte(index) & 0xff | (_getByte(index + 1) & 0xff) << 8 | (_getByte(index + 2) & 0xff) << 16;
  }

  @Override
  protected int _getInt(int index) {
    return segment.get(INT_BE, index);
  }

  @Override
  protected int _getIntLE(int index) {
    return segment.get(INT_LE, index);
  }

  @Override
  protected long _getLong(int index) {
    return segment.get(LONG_BE, index);
  }

  @Override
  protected long _getLongLE(int index) {
    return segment.get(LONG_LE, index);
  }

  @Override
  public ByteBuf getBytes(int index, ByteBuf dst, int dstIndex, int len) {
    checkDstIndex(index, len, dstIndex, dst.capacity());
    if (dst.hasArray()) {
      getBytes(index, dst.array(), dst.arrayOffset() + dstIndex, len);
    } else {
      dst.setBytes(dstIndex, view(index, len));
    }
    return this;
  }

  @Override
  public ByteBuf getBytes(int index, byte[] dst, int dstIndex, int len) {
    checkDstIndex(index, len, dstIndex, dst.length);
    MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, index, dst, dstIndex, len);
    return this;
  }

  @Override
  public ByteBuf getBytes(int index, ByteBuffer dst) {
    int len = dst.remaining();
    checkIndex(index, len);
    dst.put(view(index, len));
    return this;
  }

  @Override
  public ByteBuf getBytes(int index, OutputStream out, int len) throws IOException {
    checkIndex(index, len);
    byte[] tmp = new byte[len];
    getBytes(index, tmp, 0, len);
    out.write(tmp);
    return this;
  }

  @Override
  public int getBytes(int index, GatheringByteChannel out, int len) throws IOException {
    checkIndex(index, len);
    return out.write(view(index, len));
  }

  @Override
  public int getBytes(int index, FileChannel out, long position, int len) throws IOException {
    checkIndex(index, len);
    return out.write(view(index, len), position);
  }

  @Override
  public ByteBuf copy(int index, int len) {
    checkIndex(index, len);
    ByteBuf copy = alloc.heapBuffer(len);
    copy.writeBytes(view(index, len));
    return copy;
  }

  @Override
  public int nioBufferCount() {
    return 1;
  }

  /** A read-only copy on the heap: a direct view's address could be read after this frame's release. */
  @Override
  public ByteBuffer nioBuffer(int index, int len) {
    checkIndex(index, len);
    byte[] copy = new byte[len];
    MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, index, copy, 0, len);
    return ByteBuffer.wrap(copy).asReadOnlyBuffer();
  }

  @Override
  public ByteBuffer internalNioBuffer(int index, int len) {
    return nioBuffer(index, len);
  }

  @Override
  public ByteBuffer[] nioBuffers(int index, int len) {
    return new ByteBuffer[] {nioBuffer(index, len)};
  }

  // ---- shape ----------------------------------------------------------------------------------

  @Override
  public int capacity() {
    return length;
  }

  @Override
  public ByteBuf capacity(int newCapacity) {
    throw new ReadOnlyBufferException();
  }

  @Override
  public ByteBufAllocator alloc() {
    return alloc;
  }

  @Override
  @SuppressWarnings("deprecation")
  public ByteOrder order() {
    return ByteOrder.BIG_ENDIAN;
  }

  @Override
  public @Nullable ByteBuf unwrap() {
    return null;
  }

  /** False: Netty then copies a frame it writes rather than read its address later (see the class comment). */
  @Override
  public boolean isDirect() {
    return false;
  }

  @Override
  public boolean isReadOnly() {
    return true;
  }

  @Override
  public boolean hasArray() {
    return false;
  }

  @Override
  public byte[] array() {
    throw new UnsupportedOperationException("a received RDMA frame has no accessible array");
  }

  @Override
  public int arrayOffset() {
    throw new UnsupportedOperationException("a received RDMA frame has no accessible array");
  }

  @Override
  public boolean hasMemoryAddress() {
    return false; // reads go through the segment, which checks that the memory is still there
  }

  @Override
  public long memoryAddress() {
    throw new UnsupportedOperationException("reads of a received RDMA frame go through its MemorySegment");
  }

  // ---- writes: read-only ----------------------------------------------------------------------

  @Override
  protected void _setByte(int index, int value) {
    throw new ReadOnlyBufferException();
  }

  @Override
  protected void _setShort(int index, int value) {
    throw new ReadOnlyBufferException();
  }

  @Override
  protected void _setShortLE(int index, int value) {
    throw new ReadOnlyBufferException();
  }

  @Override
  protected void _setMedium(int index, int value) {
    throw new ReadOnlyBufferException();
  }

  @Override
  protected void _setMediumLE(int index, int value) {
    throw new ReadOnlyBufferException();
  }

  @Override
  protected void _setInt(int index, int value) {
    throw new ReadOnlyBufferException();
  }

  @Override
  protected void _setIntLE(int index, int value) {
    throw new ReadOnlyBufferException();
  }

  @Override
  protected void _setLong(int index, long value) {
    throw new ReadOnlyBufferException();
  }

  @Override
  protected void _setLongLE(int index, long value) {
    throw new ReadOnlyBufferException();
  }

  @Override
  public ByteBuf setBytes(int index, ByteBuf src, int srcIndex, int len) {
    throw new ReadOnlyBufferException();
  }

  @Override
  public ByteBuf setBytes(int index, byte[] src, int srcIndex, int len) {
    throw new ReadOnlyBufferException();
  }

  @Override
  public ByteBuf setBytes(int index, ByteBuffer src) {
    throw new ReadOnlyBufferException();
  }

  @Override
  public int setBytes(int index, InputStream in, int len) {
    throw new ReadOnlyBufferException();
  }

  @Override
  public int setBytes(int index, ScatteringByteChannel in, int len) {
    throw new ReadOnlyBufferException();
  }

  @Override
  public int setBytes(int index, FileChannel in, long position, int len) {
    throw new ReadOnlyBufferException();
  }
}
