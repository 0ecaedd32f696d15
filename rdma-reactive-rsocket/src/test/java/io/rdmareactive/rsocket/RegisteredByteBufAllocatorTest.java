package io.rdmareactive.rsocket;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.rdmareactive.rdma.ResourceClosedException;
import io.rdmareactive.rdma.device.RdmaDevices;
import io.rdmareactive.rdma.spi.RdmaProvider;
import io.rdmareactive.rdma.transport.OutboundMessage;
import io.rdmareactive.rdma.transport.RdmaLoopResources;
import io.rdmareactive.rdma.transport.RegisteredMessage;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/**
 * The registered allocator on the in-memory provider's protection domain: where its buffers lie,
 * which frames it sends without a copy (and which it leaves to the copy path), its bound, and its
 * misuse: a frame over released memory and an allocator used after dispose fail typed.
 */
class RegisteredByteBufAllocatorTest {
  private RdmaLoopResources loops;
  private RegisteredByteBufAllocator alloc;

  @BeforeEach
  void slab() {
    loops = RdmaLoopResources.create("alloc-test", 1);
    RdmaProvider provider = RdmaDevices.provider("in-memory");
    alloc = RegisteredByteBufAllocator.create(loops.protectionDomain(provider, provider.devices().getFirst().name()), 1 << 16);
  }

  @AfterEach
  void free() {
    alloc.dispose();
    assertThat(alloc.isFreed()).as("every buffer of the test released").isTrue();
    loops.disposeLater().block();
  }

  private static byte[] bytes(OutboundMessage m) {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment s = a.allocate(Math.max(1, m.length()));
      m.copyTo(0, s, 0, m.length());
      return s.asSlice(0, m.length()).toArray(ValueLayout.JAVA_BYTE);
    }
  }

  @Test
  void aFrameOfRegisteredPartsIsOneMessageGatheredFromThemAndReleasedWithIt() {
    ByteBuf header = alloc.buffer().writeBytes(new byte[] {1, 2, 3});
    ByteBuf data = alloc.buffer(1000).writeBytes(new byte[1000]).setByte(999, 9);
    CompositeByteBuf frame = alloc.compositeBuffer().addComponents(true, header, Unpooled.EMPTY_BUFFER, data);
    assertThat(alloc.usedBytes()).isEqualTo(256 + 1024); // power-of-two blocks
    RegisteredMessage m = alloc.messageOf(frame);
    assertThat(m).isNotNull();
    assertThat(m.ranges()).isEqualTo(2);
    assertThat(m.region()).isSameAs(alloc.region());
    assertThat(m.length()).isEqualTo(1003);
    byte[] b = bytes(m);
    assertThat(b[0]).isEqualTo((byte) 1);
    assertThat(b[1002]).isEqualTo((byte) 9);
    m.release();
    assertThat(frame.refCnt()).as("released with the message").isZero();
    m.release();
    assertThat(alloc.usedBytes()).as("released once, the blocks back").isZero();
  }

  @Test
  void adjacentPartsMakeOneRangeAndASliceIsFound() {
    ByteBuf whole = alloc.buffer(4096).writeZero(4096);
    RegisteredMessage m = alloc.messageOf(alloc.compositeBuffer()
        .addComponents(true, whole.retainedSlice(0, 100), whole.retainedSlice(100, 200), whole.retainedSlice(1000, 10)));
    assertThat(m).isNotNull();
    assertThat(m.ranges()).isEqualTo(2);
    assertThat(m.offset()).isEqualTo(alloc.messageOf(whole.retainedSlice()).offset());
    m.release();
    whole.release(2); // its own count and the slice's, whose message was never released
    assertThat(alloc.usedBytes()).isZero();
  }

  @Test
  void framesWithUnregisteredOrTooManyPartsAreLeftToTheCopyPath() {
    ByteBuf header = alloc.buffer().writeByte(1);
    CompositeByteBuf withHeap = alloc.compositeBuffer().addComponents(true, header, Unpooled.wrappedBuffer(new byte[8]));
    assertThat(alloc.messageOf(withHeap)).isNull();
    withHeap.release();
    CompositeByteBuf many = alloc.compositeBuffer();
    for (int i = 0; i <= RegisteredMessage.MAX_RANGES; i++) {
      many.addComponent(true, alloc.buffer(8).writeLong(i));
    }
    assertThat(alloc.messageOf(many)).as("more ranges than a send gathers").isNull();
    many.release();
    ByteBuf direct = Unpooled.directBuffer(8).writeLong(7);
    assertThat(alloc.messageOf(direct)).as("direct memory outside the slab").isNull();
    direct.release();
    ByteBuf grown = alloc.buffer(64).writeZero(64);
    grown.writeZero(1000); // past its block: moved to memory of its own
    assertThat(alloc.messageOf(grown)).isNull();
    grown.release();
    assertThat(alloc.usedBytes()).isZero();
  }

  @Test
  void aFullSlabHandsOutUnregisteredBuffersAndSaysSo() {
    ByteBuf all = alloc.buffer(1 << 16);
    ByteBuf more = alloc.buffer(64).writeLong(1);
    assertThat(alloc.unregisteredBuffers()).isEqualTo(1);
    assertThat(alloc.messageOf(more)).isNull();
    more.release();
    all.release();
    ByteBuf again = alloc.buffer(64).writeLong(1);
    RegisteredMessage m = alloc.messageOf(again);
    assertThat(m).as("registered again once blocks came back").isNotNull();
    m.release();
  }

  /** The application released a frame's data (too early): queuing the frame fails typed, and queues nothing. */
  @Test
  void aFrameOverReleasedMemoryFailsTyped() {
    FrameSender sender = new FrameSender(8, 1 << 20, alloc);
    ByteBuf data = alloc.buffer(64).writeLong(5);
    CompositeByteBuf frame = alloc.compositeBuffer().addComponents(true, alloc.buffer().writeByte(1), data.retainedSlice());
    data.release(2); // the application's count and the frame's
    assertThatThrownBy(() -> sender.offer(frame)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("refCnt");
    assertThat(sender.pending()).isZero();
    assertThat(sender.pendingBytes()).isZero();
    assertThat(frame.refCnt()).isZero();
    sender.cancel();
  }

  /** A frame over the slab reaches the transport as a registered message; released by it, it frees its buffers. */
  @Test
  void theSenderHandsRegisteredFramesToTheTransportWithoutACopy() {
    FrameSender sender = new FrameSender(8, 1 << 20, alloc);
    ByteBuf frame = alloc.buffer(100).writeZero(100);
    assertThat(sender.offer(frame)).isTrue();
    sender.complete();
    StepVerifier.create(sender)
        .assertNext(m -> {
          assertThat(m).isInstanceOf(RegisteredMessage.class);
          assertThat(frame.refCnt()).as("held until the sends retire").isEqualTo(1);
          m.release();
        })
        .expectComplete()
        .verify();
    assertThat(frame.refCnt()).isZero();
  }

  @Test
  void afterDisposeNoBufferIsMadeAndTheSlabGoesWithTheLastOneOut() {
    ByteBuf kept = alloc.buffer(64).writeLong(42);
    alloc.dispose();
    assertThatThrownBy(alloc::buffer).isInstanceOf(ResourceClosedException.class);
    assertThatThrownBy(() -> alloc.directBuffer(8)).isInstanceOf(ResourceClosedException.class);
    assertThat(alloc.isFreed()).as("a buffer is still out").isFalse();
    assertThat(kept.getLong(0)).as("and still valid").isEqualTo(42);
    kept.release();
    assertThat(alloc.isFreed()).isTrue();
    assertThat(alloc.region().isClosed()).isTrue();
    assertThatThrownBy(() -> kept.getLong(0)).isInstanceOf(IllegalStateException.class); // refCnt 0, never the freed memory
  }
}
