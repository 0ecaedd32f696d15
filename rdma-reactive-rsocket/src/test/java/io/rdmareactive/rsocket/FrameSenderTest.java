package io.rdmareactive.rsocket;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.CompositeByteBuf;
import io.rdmareactive.rdma.transport.OutboundMessage;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

class FrameSenderTest {
  private static ByteBuf frame(int producer, int n) {
    return Unpooled.directBuffer(8).writeInt(producer).writeInt(n);
  }

  @Test
  void framesFromManyThreadsArriveOnceEachInPerThreadOrderAndAreReleased() throws Exception {
    int producers = 4;
    int perProducer = 20_000;
    FrameSender sender = new FrameSender(producers * perProducer);
    List<ByteBuf> offered = new ArrayList<>();
    List<List<ByteBuf>> perThread = new ArrayList<>();
    for (int p = 0; p < producers; p++) {
      List<ByteBuf> frames = new ArrayList<>();
      for (int i = 0; i < perProducer; i++) {
        frames.add(frame(p, i));
      }
      perThread.add(frames);
      offered.addAll(frames);
    }
    int[] next = new int[producers];
    StepVerifier.Step<OutboundMessage> step = StepVerifier.create(Flux.from(sender).publishOn(Schedulers.single(), 16))
        .then(() -> {
          ExecutorService pool = Executors.newFixedThreadPool(producers);
          CountDownLatch start = new CountDownLatch(1);
          for (int p = 0; p < producers; p++) {
            List<ByteBuf> frames = perThread.get(p);
            pool.execute(() -> {
              try {
                start.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              frames.forEach(f -> assertThat(sender.offer(f)).isTrue());
            });
          }
          start.countDown();
          pool.shutdown();
          try {
            assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
          } catch (InterruptedException e) {
            throw new AssertionError(e);
          }
          sender.complete();
        });
    step.thenConsumeWhile(m -> {
          ByteBuffer b = ByteBuffer.wrap(copyAndRelease(m));
          int p = b.getInt();
          assertThat(b.getInt()).isEqualTo(next[p]++);
          return true;
        })
        .expectComplete()
        .verify(Duration.ofSeconds(60));
    assertThat(next).containsOnly(perProducer);
    assertThat(offered).allSatisfy(f -> assertThat(f.refCnt()).isZero());
    assertThat(sender.pending()).isZero();
  }

  @Test
  void refusesFramesBeyondItsCapacityAndReleasesThem() {
    FrameSender sender = new FrameSender(4);
    List<ByteBuf> frames = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      frames.add(frame(0, i));
    }
    for (int i = 0; i < 4; i++) {
      assertThat(sender.offer(frames.get(i))).isTrue();
    }
    assertThat(sender.offer(frames.get(4))).isFalse();
    assertThat(frames.get(4).refCnt()).isZero();
    assertThat(sender.pending()).isEqualTo(4);
    StepVerifier.create(sender, 2)
        .consumeNextWith(OutboundMessage::release)
        .consumeNextWith(OutboundMessage::release)
        .then(() -> assertThat(sender.offer(frame(0, 5))).isTrue())
        .thenCancel()
        .verify(Duration.ofSeconds(10));
    assertThat(frames).allSatisfy(f -> assertThat(f.refCnt()).isZero());
    assertThat(sender.pending()).isZero();
  }

  /** A refusal says which bound refused it: the count, or the bytes (the duplex connection names that setting). */
  @Test
  void aRefusalSaysWhichBoundRefusedTheFrame() {
    FrameSender byCount = new FrameSender(2, 1 << 20, null);
    assertThat(byCount.tryOffer(frame(0, 0))).isEqualTo(FrameSender.QUEUED);
    assertThat(byCount.tryOffer(frame(0, 1))).isEqualTo(FrameSender.QUEUED);
    ByteBuf third = frame(0, 2);
    assertThat(byCount.tryOffer(third)).isEqualTo(FrameSender.OVER_FRAMES);
    assertThat(third.refCnt()).isZero();
    byCount.cancel();
    FrameSender byBytes = new FrameSender(8, 12, null);
    assertThat(byBytes.tryOffer(frame(0, 0))).isEqualTo(FrameSender.QUEUED); // 8 bytes
    ByteBuf second = frame(0, 1);
    assertThat(byBytes.tryOffer(second)).isEqualTo(FrameSender.OVER_BYTES); // 16 > 12
    assertThat(second.refCnt()).isZero();
    assertThat(byBytes.pending()).isEqualTo(1);
    assertThat(byBytes.pendingBytes()).isEqualTo(8);
    byBytes.cancel();
    assertThat(byBytes.pending()).isZero();
  }

  /**
   * The frames waiting are bounded in bytes too: a frame may be 16 MiB, so 8,192 of them would be
   * 128 GiB. Frames of 1 MiB (views of one array) into the default frame limit: refused after
   * 64 MiB, each refused one released.
   */
  @Test
  void refusesFramesBeyondItsBytesAndReleasesThem() {
    FrameSender sender = new FrameSender(RdmaClientTransport.DEFAULT_MAX_PENDING_FRAMES);
    byte[] mebibyte = new byte[1 << 20];
    List<ByteBuf> frames = new ArrayList<>();
    int accepted = 0;
    for (int i = 0; i < 100; i++) {
      ByteBuf f = Unpooled.wrappedBuffer(mebibyte);
      frames.add(f);
      accepted += sender.offer(f) ? 1 : 0;
    }
    assertThat(accepted).as("frames of 1 MiB let in to wait").isEqualTo(64);
    assertThat(frames.subList(64, 100)).allSatisfy(f -> assertThat(f.refCnt()).isZero());
    sender.cancel();
    assertThat(frames).allSatisfy(f -> assertThat(f.refCnt()).isZero());
    assertThat(sender.pending()).isZero();
  }

  @Test
  void framesOfferedAfterCancelOrCompletionAreReleased() {
    FrameSender sender = new FrameSender(8);
    sender.complete();
    ByteBuf late = frame(0, 0);
    assertThat(sender.offer(late)).isTrue();
    assertThat(late.refCnt()).isZero();
    StepVerifier.create(sender).expectComplete().verify(Duration.ofSeconds(10));

    FrameSender cancelled = new FrameSender(8);
    ByteBuf queued = frame(0, 1);
    cancelled.offer(queued);
    cancelled.cancel();
    assertThat(queued.refCnt()).isZero();
    ByteBuf after = frame(0, 2);
    cancelled.offer(after);
    assertThat(after.refCnt()).isZero();
  }

  /** What the transport does with a frame: copies it out, maybe in fragments, then releases it once. */
  private static byte[] copyAndRelease(OutboundMessage m) {
    MemorySegment to = Arena.ofAuto().allocate(m.length() + 8);
    m.copyTo(0, to, 8, m.length());
    m.release();
    return to.asSlice(8, m.length()).toArray(ValueLayout.JAVA_BYTE);
  }

  @Test
  void framesAreCopiedOutWholeOrInFragmentsAndReleasedOnceTheTransportIsDone() {
    byte[] header = "head".getBytes(StandardCharsets.US_ASCII);
    byte[] payload = "a payload of some length".getBytes(StandardCharsets.US_ASCII);
    byte[] whole = new byte[header.length + payload.length];
    System.arraycopy(header, 0, whole, 0, header.length);
    System.arraycopy(payload, 0, whole, header.length, payload.length);
    // RSocket's frames: a direct header and the payload as a composite; a heap frame; a direct one;
    // and frames that do not start at index 0.
    CompositeByteBuf composite = Unpooled.compositeBuffer()
        .addComponents(true, Unpooled.directBuffer().writeBytes(header), Unpooled.wrappedBuffer(payload));
    ByteBuf heap = Unpooled.buffer().writeBytes(new byte[3]).writeBytes(whole);
    heap.skipBytes(3);
    ByteBuf direct = Unpooled.directBuffer().writeBytes(new byte[5]).writeBytes(whole);
    direct.skipBytes(5);
    for (ByteBuf frame : List.of(composite, heap, direct)) {
      FrameSender sender = new FrameSender(4);
      assertThat(sender.offer(frame)).isTrue();
      StepVerifier.create(sender, 1)
          .consumeNextWith(m -> {
            assertThat(m.length()).isEqualTo(whole.length);
            assertThat(frame.refCnt()).as("held until the transport is done").isOne();
            MemorySegment to = Arena.ofAuto().allocate(whole.length);
            for (int from = 0; from < whole.length; from += 7) { // fragments of 7 bytes, the last shorter
              m.copyTo(from, to, from, Math.min(7, whole.length - from));
            }
            assertThat(to.toArray(ValueLayout.JAVA_BYTE)).isEqualTo(whole);
            m.release();
            assertThat(frame.refCnt()).isZero();
            m.release(); // once only: a second call must not release the frame again
          })
          .thenCancel()
          .verify(Duration.ofSeconds(10));
    }
  }

  @Test
  void copiesIntoEverNewSendBuffersKeepABoundedCacheOfViews() {
    byte[] payload = new byte[100];
    FrameSender sender = new FrameSender(4 * FrameSender.MAX_VIEWS);
    Arena arena = Arena.ofAuto();
    MemorySegment chunk = arena.allocate(4096);
    int frames = 3 * FrameSender.MAX_VIEWS;
    for (int i = 0; i < frames; i++) {
      payload[0] = (byte) i;
      assertThat(sender.offer(Unpooled.compositeBuffer().addComponents(true, Unpooled.directBuffer().writeByte(7),
          Unpooled.wrappedBuffer(payload.clone())))).isTrue();
    }
    // As a loop's send pool hands them out: each copy into a slice made anew (a slot bound to another buffer).
    long copied = Flux.from(sender).take(frames).doOnNext(m -> {
      MemorySegment to = chunk.asSlice(0, 1024);
      m.copyTo(0, to, 16, m.length());
      assertThat(to.get(ValueLayout.JAVA_BYTE, 16)).isEqualTo((byte) 7);
      m.release();
      assertThat(sender.cachedViews()).isLessThanOrEqualTo(FrameSender.MAX_VIEWS);
    }).count().block(Duration.ofSeconds(30));
    assertThat(copied).isEqualTo(frames);
    assertThat(sender.cachedViews()).isPositive().isLessThanOrEqualTo(FrameSender.MAX_VIEWS);
  }

  @Test
  void allowsOneSubscriber() {
    FrameSender sender = new FrameSender(8);
    StepVerifier.create(sender).thenCancel().verify();
    StepVerifier.create(sender).expectError(IllegalStateException.class).verify(Duration.ofSeconds(10));
  }
}
