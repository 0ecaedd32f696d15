package io.rdmareactive.rsocket;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.rdmareactive.rdma.transport.RdmaMessage;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ReadOnlyBufferException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class SegmentByteBufTest {
  /** A message over {@code segment}, counting releases. */
  private static final class Message implements RdmaMessage {
    final MemorySegment segment;
    final AtomicInteger released = new AtomicInteger();

    Message(MemorySegment segment) {
      this.segment = segment;
    }

    @Override
    public int length() {
      return (int) segment.byteSize();
    }

    @Override
    public MemorySegment segment() {
      return segment.asReadOnly();
    }

    @Override
    public void release() {
      released.incrementAndGet();
    }
  }

  private static MemorySegment bytes(Arena arena, byte... b) {
    MemorySegment s = arena.allocate(b.length);
    s.copyFrom(MemorySegment.ofArray(b));
    return s;
  }

  @Test
  void readsTheMessageInPlaceAndReleasesItWithTheLastReference() {
    try (Arena arena = Arena.ofConfined()) {
      Message m = new Message(bytes(arena, (byte) 1, (byte) 2, (byte) 3, (byte) 4, (byte) 5, (byte) 6, (byte) 7, (byte) 8, (byte) 9));
      ByteBuf buf = new SegmentByteBuf(ByteBufAllocator.DEFAULT, m);
      assertThat(buf.readableBytes()).isEqualTo(9);
      assertThat(buf.isDirect()).as("never direct: Netty copies it when written").isFalse();
      assertThat(buf.isReadOnly()).isTrue();
      assertThat(buf.getInt(0)).isEqualTo(0x01020304);
      assertThat(buf.getIntLE(0)).isEqualTo(0x04030201);
      assertThat(buf.getLong(1)).isEqualTo(0x0203040506070809L);
      assertThat(buf.getUnsignedMedium(0)).isEqualTo(0x010203);
      assertThat(buf.getShort(7)).isEqualTo((short) 0x0809);

      ByteBuf slice = buf.retainedSlice(2, 3);
      buf.release();
      assertThat(m.released).hasValue(0);
      byte[] got = new byte[3];
      slice.readBytes(got);
      assertThat(got).containsExactly(3, 4, 5);
      ByteBuf copy = slice.copy(0, 3);
      slice.release();
      assertThat(m.released).hasValue(1);
      assertThat(copy.getByte(0)).isEqualTo((byte) 3);
      copy.release();
    }
  }

  @Test
  void heapMessagesToo() {
    Message m = new Message(MemorySegment.ofArray("fragmented".getBytes(StandardCharsets.UTF_8)));
    ByteBuf buf = new SegmentByteBuf(ByteBufAllocator.DEFAULT, m);
    assertThat(buf.isDirect()).isFalse();
    assertThat(buf.toString(StandardCharsets.UTF_8)).isEqualTo("fragmented");
    assertThat(buf.nioBuffer().remaining()).isEqualTo(10);
    buf.release();
    assertThat(m.released).hasValue(1);
  }

  @Test
  void isReadOnly() {
    Message m = new Message(MemorySegment.ofArray(new byte[8]));
    ByteBuf buf = new SegmentByteBuf(ByteBufAllocator.DEFAULT, m);
    assertThatThrownBy(() -> buf.setInt(0, 1)).isInstanceOf(ReadOnlyBufferException.class);
    assertThatThrownBy(() -> buf.setBytes(0, new byte[2])).isInstanceOf(ReadOnlyBufferException.class);
    assertThatThrownBy(() -> buf.writeByte(1)).isInstanceOfAny(IndexOutOfBoundsException.class, ReadOnlyBufferException.class);
    buf.release();
  }

  @Test
  void readingAfterTheMemoryIsGoneFailsInsteadOfReadingFreedMemory() {
    Arena arena = Arena.ofShared();
    Message m = new Message(bytes(arena, (byte) 1, (byte) 2, (byte) 3, (byte) 4));
    ByteBuf buf = new SegmentByteBuf(ByteBufAllocator.DEFAULT, m);
    arena.close();
    assertThatThrownBy(() -> buf.getInt(0)).isInstanceOf(IllegalStateException.class);
    buf.release();
    assertThat(m.released).hasValue(1);
  }
}
