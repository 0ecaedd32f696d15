package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.conformance.LeakCheck;
import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.MessageTooLargeException;
import io.rdmareactive.rdma.device.RdmaDevices;
import io.rdmareactive.rdma.ResourceClosedException;
import io.rdmareactive.rdma.spi.ConnectionProvider;
import io.rdmareactive.rdma.spi.EndpointOptions;
import io.rdmareactive.rdma.spi.Listener;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

/** The data path: payloads of every size, ordering, flow control and releases. */
public abstract class DataPathConformance extends TransportSuite {


  @Test
  void echoesPayloadsFromOneByteToOneMebibyte() {
    DisposableRdmaServer server = bind(server().handle((in, out) -> out.send(in.receive())));
    RdmaConnection c = connect(client(server));
    int[] sizes = {1, 2, 100, 4095, 16 * 1024 - 1, 16 * 1024, 16 * 1024 + 1, 65_536, 300_001, 1 << 20};
    List<byte[]> payloads = new ArrayList<>();
    for (int i = 0; i < sizes.length; i++) {
      payloads.add(random(sizes[i], i));
    }
    Mono<List<byte[]>> echoed = c.inbound().receiveBytes().take(sizes.length).collectList();
    StepVerifier.create(Mono.zip(c.outbound().send(Flux.fromIterable(payloads)).thenReturn(true), echoed)
            .map(t -> t.getT2()))
        .assertNext(got -> {
          assertThat(got).hasSize(sizes.length);
          for (int i = 0; i < sizes.length; i++) {
            assertThat(got.get(i)).as("payload %d of %d bytes", i, sizes[i]).isEqualTo(payloads.get(i));
          }
        })
        .expectComplete()
        .verify(WAIT);
    assertThat(c.statistics().messagesSent()).isEqualTo(sizes.length);
    assertThat(c.statistics().messagesReceived()).isEqualTo(sizes.length);
  }

  @Test
  void anIdleConnectionPinsOneReceiveChunkAndABusyOneGrowsToItsBufferCount() {
    int bufferSize = 16 * 1024;
    int count = 64;
    long oneChunk = (long) Math.max(RegisteredBuffers.MIN_CHUNK_BUFFERS, RegisteredBuffers.CHUNK_BYTES / bufferSize)
        * bufferSize;
    Sinks.One<RdmaConnection> serverSide = Sinks.one();
    // Both on the loops' pools, whatever else the shared loops serve now (no connection of its own).
    DisposableRdmaServer server = bind(server().option(RdmaOption.BUFFER_SIZE, bufferSize)
        .option(RdmaOption.BUFFER_COUNT, count).option(RdmaOption.LOOP_PRIVATE_CONNECTIONS, 0)
        .doOnConnection(serverSide::tryEmitValue)
        .handle((in, out) -> out.send(in.receive())));
    RdmaConnection c = connect(client(server).option(RdmaOption.BUFFER_SIZE, bufferSize)
        .option(RdmaOption.BUFFER_COUNT, count).option(RdmaOption.LOOP_PRIVATE_CONNECTIONS, 0));
    RdmaConnection s = serverSide.asMono().block(WAIT);
    long otherPools = RdmaLoopResources.shared().registeredSendBytes(); // pools still held for earlier tests' connections
    // Send buffers are borrowed from the loop's pool, and on the loop's shared receive queue the
    // receive buffers are the loop's too: then a connection registers nothing of its own.
    long idle = SHARED_RECEIVE_QUEUE ? 0 : oneChunk;
    assertThat(c.statistics().registeredBytes()).as("an idle client").isEqualTo(idle);
    assertThat(s.statistics().registeredBytes()).as("an idle server connection").isEqualTo(idle);

    // A burst of messages of a full buffer each, all in flight at once, needs more of both pools.
    int n = 500;
    StepVerifier.create(Mono.zip(c.outbound().send(Flux.range(0, n).map(i -> random(bufferSize, i))).thenReturn(true),
            c.inbound().receiveBytes().take(n).count()).map(t -> t.getT2()))
        .expectNext((long) n)
        .expectComplete()
        .verify(Duration.ofSeconds(60));
    long busy = c.statistics().registeredBytes();
    if (SHARED_RECEIVE_QUEUE) {
      assertThat(busy).as("a busy client's own buffers").isZero();
    } else {
      assertThat(busy).as("a busy client's receive buffers").isGreaterThan(oneChunk)
          .isLessThanOrEqualTo(((long) count + Protocol.RESERVE) * bufferSize);
    }
    // The burst gave its send buffers back: the loops' pools (the client's and the server's) keep
    // its chunks until a trim period passed without them, then one base chunk each.
    TransportSuite.await(() -> RdmaLoopResources.shared().registeredSendBytes()
        <= otherPools + 2L * ReceivePool.CHUNK_BYTES);
    assertThat(RdmaLoopResources.shared().registeredSendBytes()).as("the loops' send pools after the burst")
        .isPositive();
  }

  @Test
  void sequencesArriveCompleteAndInOrderBothWays() {
    int n = fixture().sequenceLength();
    Sinks.One<Long> serverSaw = Sinks.one();
    DisposableRdmaServer server = bind(server().handle((in, out) -> Mono.when(
        out.send(Flux.range(0, n).map(i -> number(i))),
        checkSequence(in, n).doOnNext(serverSaw::tryEmitValue))));
    RdmaConnection c = connect(client(server));
    StepVerifier.create(Mono.zip(c.outbound().send(Flux.range(0, n).map(i -> number(i))).thenReturn(true),
            checkSequence(c.inbound(), n)).map(t -> t.getT2()))
        .expectNext((long) n)
        .expectComplete()
        .verify(Duration.ofSeconds(60));
    StepVerifier.create(serverSaw.asMono()).expectNext((long) n).expectComplete().verify(WAIT);
    assertThat(c.statistics().receiverNotReady()).isZero();
    assertThat(c.statistics().creditViolations()).isZero();
    // One post per pass of the drain, whatever it made; its last send signaled, and one in 16
    // within a long one: never more completions asked for than that. (Counted on the client, whose
    // sends have all completed: send() completed.)
    RdmaStatistics s = c.statistics();
    long sends = s.messagesSent() + s.creditUpdatesSent(); // at most one SEND each: a number fits a buffer
    assertThat(s.doorbells()).as("posts").isBetween(1L, sends);
    assertThat(s.signaledSends()).as("signaled sends")
        .isBetween(s.doorbells(), s.doorbells() + sends / SendDoorbell.SIGNAL_INTERVAL);
    assertThat(s.completionsPolled()).as("completions polled").isPositive();
  }

  /**
   * Inline sends give their buffer back when posted (the bytes are in the work request): with four
   * send buffers, a stream of small messages reuses each many times while earlier sends are still
   * in flight, and every message arrives, once, in order.
   */
  @Test
  void inlineSendsGiveTheirBufferBackWhenPostedAndArriveInOrder() {
    int n = 400;
    Sinks.One<Long> serverSaw = Sinks.one();
    DisposableRdmaServer server = bind(server().handle((in, out) ->
        checkSequence(in, n).doOnNext(serverSaw::tryEmitValue).then()));
    RdmaConnection c = connect(client(server).option(RdmaOption.INLINE_THRESHOLD, 64)
        .option(RdmaOption.BUFFER_COUNT, 4));
    StepVerifier.create(c.outbound().send(Flux.range(0, n).map(i -> number(i)))).expectComplete()
        .verify(Duration.ofSeconds(60));
    StepVerifier.create(serverSaw.asMono()).expectNext((long) n).expectComplete().verify(WAIT);
    assertThat(c.statistics().messagesSent()).isEqualTo(n);
    assertThat(c.statistics().creditViolations()).isZero();
  }

  /** Counts messages that carry 0, 1, 2, ... in order; fails at the first gap, duplicate or reordering. */
  static Mono<Long> checkSequence(RdmaInbound in, int n) {
    AtomicLong expected = new AtomicLong();
    return in.receive().take(n).map(m -> {
      try {
        long got = m.asByteBuffer().getLong();
        long want = expected.getAndIncrement();
        if (got != want) {
          throw new AssertionError("expected message " + want + ", got " + got);
        }
        return got;
      } finally {
        m.release();
      }
    }).count();
  }

  @Test
  void aSlowConsumerHoldsTheSenderBack() {
    int n = 300;
    int bufferCount = 8;
    // Small buffers: the 8-byte messages coalesce, five to a SEND, so that flow control, which
    // counts buffers, still bounds them far below n.
    int bufferSize = 64;
    int perBuffer = (bufferSize - Protocol.BATCH_COUNT) / (Protocol.BATCH_LENGTH + 8);
    AtomicInteger produced = new AtomicInteger();
    AtomicInteger consumed = new AtomicInteger();
    AtomicInteger maxAhead = new AtomicInteger();
    AtomicReference<RdmaConnection> serverSide = new AtomicReference<>();
    DisposableRdmaServer server = bind(server().option(RdmaOption.BUFFER_COUNT, bufferCount)
        .option(RdmaOption.BUFFER_SIZE, bufferSize)
        .doOnConnection(serverSide::set)
        .handle((in, out) -> in.receiveBytes()
            .delayElements(Duration.ofMillis(1))
            .doOnNext(b -> {
              consumed.incrementAndGet();
              maxAhead.accumulateAndGet(produced.get() - consumed.get(), Math::max);
            })
            .then()));
    RdmaConnection c = connect(client(server).option(RdmaOption.BUFFER_COUNT, bufferCount)
        .option(RdmaOption.BUFFER_SIZE, bufferSize));
    StepVerifier.create(c.outbound().send(Flux.range(0, n).doOnNext(i -> produced.incrementAndGet())
            .map(i -> number(i))))
        .expectComplete()
        .verify(WAIT);
    // What may be ahead of the consumer: delayElements' prefetch (32), the receiver's buffers
    // (bufferCount + 2, perBuffer messages each), the sender's queue (SendSource#capacity), a
    // message in hand. Without flow control all 300 would be.
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (consumed.get() < n && System.nanoTime() < deadline) {
      LockSupport.parkNanos(1_000_000);
    }
    assertThat(consumed.get()).isEqualTo(n);
    assertThat(maxAhead.get()).as("messages produced but not yet consumed, at most").isLessThanOrEqualTo(
        32 + (bufferCount + Protocol.RESERVE) * perBuffer + 4 * Math.max(8, bufferCount) + 2);
    RdmaStatistics sender = c.statistics();
    RdmaStatistics receiver = serverSide.get().statistics();
    assertThat(sender.receiverNotReady()).isZero();
    assertThat(receiver.receiverNotReady()).isZero();
    assertThat(sender.creditViolations()).isZero();
    assertThat(sender.creditStalls()).as("a slow consumer makes the sender wait for credits").isPositive();
    assertThat(sender.completionErrors() + receiver.completionErrors()).isZero();
    assertThat(sender.messagesSent()).as("messages coalesced: more messages than SENDs").isGreaterThan(sender.dataSends());
    assertThat(sender.maxSendsInFlight()).isLessThanOrEqualTo(bufferCount + Protocol.RESERVE);
    assertThat(receiver.creditUpdatesSent()).as("the idle direction grants through credit updates").isPositive();
    // Updates never answer updates forever: far fewer of them than messages.
    assertThat(receiver.creditUpdatesSent() + sender.creditUpdatesSent()).isLessThan(n);
  }

  /** An {@link OutboundMessage} that records its releases. */
  static final class CountingMessage implements OutboundMessage {
    final byte[] bytes;
    final AtomicInteger releases = new AtomicInteger();

    CountingMessage(byte[] bytes) {
      this.bytes = bytes;
    }

    @Override
    public int length() {
      return bytes.length;
    }

    @Override
    public void copyTo(long offset, java.lang.foreign.MemorySegment target, long targetOffset, int length) {
      java.lang.foreign.MemorySegment.copy(bytes, (int) offset, target, java.lang.foreign.ValueLayout.JAVA_BYTE,
          targetOffset, length);
    }

    @Override
    public void release() {
      releases.incrementAndGet();
    }
  }

  @Test
  void outboundMessagesCopyThemselvesInWholeOrInFragmentsAndAreReleasedOnce() {
    DisposableRdmaServer server = bind(server().option(RdmaOption.BUFFER_SIZE, 1024)
        .handle((in, out) -> out.send(in.receive())));
    RdmaConnection c = connect(client(server).option(RdmaOption.BUFFER_SIZE, 1024)
        .option(RdmaOption.MAX_MESSAGE_SIZE, 100_000));
    byte[] small = random(100, 1);
    byte[] large = random(10_000, 2); // ten fragments: copyTo at ten offsets
    CountingMessage a = new CountingMessage(small);
    CountingMessage b = new CountingMessage(large);
    StepVerifier.create(Mono.zip(c.outbound().send(Flux.just(a, b)).thenReturn(true),
            c.inbound().receiveBytes().take(2).collectList()).map(t -> t.getT2()))
        .assertNext(l -> assertThat(l).containsExactly(small, large))
        .expectComplete()
        .verify(WAIT);
    assertThat(a.releases).hasValue(1);
    assertThat(b.releases).hasValue(1);
    CountingMessage tooLarge = new CountingMessage(new byte[100_001]);
    StepVerifier.create(c.outbound().send(Mono.just(tooLarge)))
        .expectError(MessageTooLargeException.class)
        .verify(WAIT);
    assertThat(tooLarge.releases).as("dropped: released all the same").hasValue(1);
    assertThat(c.statistics().bytesSent()).isEqualTo(small.length + large.length);
  }

  /**
   * Each fragment's copy gets its own send buffer, not the registered chunk it lies in: a copy
   * that writes all of its target (here: junk first, then its bytes) reaches no other send in
   * flight, and every message arrives intact.
   */
  @Test
  void anOutboundMessageCopiesIntoItsOwnSendBufferOnly() {
    int buffer = 1024;
    DisposableRdmaServer server = bind(server().option(RdmaOption.BUFFER_SIZE, buffer)
        .handle((in, out) -> out.send(in.receive())));
    RdmaConnection c = connect(client(server).option(RdmaOption.BUFFER_SIZE, buffer));
    AtomicLong largestTarget = new AtomicLong();
    List<byte[]> sent = new ArrayList<>();
    List<OutboundMessage> messages = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      byte[] b = random(3 * buffer - 100, i); // three fragments each
      sent.add(b);
      messages.add(new OutboundMessage() {
        @Override
        public int length() {
          return b.length;
        }

        @Override
        public void copyTo(long offset, java.lang.foreign.MemorySegment target, long targetOffset, int length) {
          largestTarget.accumulateAndGet(target.byteSize(), Math::max);
          target.fill((byte) 0x55); // careless: all of what it was given
          java.lang.foreign.MemorySegment.copy(b, (int) offset, target, java.lang.foreign.ValueLayout.JAVA_BYTE,
              targetOffset, length);
        }

        @Override
        public void release() {
        }
      });
    }
    StepVerifier.create(Mono.zip(c.outbound().send(Flux.fromIterable(messages)).thenReturn(true),
            c.inbound().receiveBytes().take(sent.size()).collectList()).map(t -> t.getT2()))
        .assertNext(l -> assertThat(l).containsExactlyElementsOf(sent))
        .expectComplete()
        .verify(WAIT);
    assertThat(largestTarget.get()).as("the memory a copy was handed").isLessThanOrEqualTo(buffer);
  }

  /**
   * A publisher may still emit after its send was cancelled (Reactive Streams rule 2.8): the item
   * is released, once, by the connection's drain (the send's queue has one consumer).
   */
  @Test
  void anItemEmittedAfterItsSendWasCancelledIsReleasedOnce() {
    DisposableRdmaServer server = bind(server().handle((in, out) -> in.receive().doOnNext(RdmaMessage::release).then()));
    RdmaConnection c = connect(client(server));
    AtomicReference<org.reactivestreams.Subscriber<? super Object>> subscriber = new AtomicReference<>();
    AtomicLong requested = new AtomicLong();
    Sinks.Empty<Void> cancelled = Sinks.empty();
    org.reactivestreams.Publisher<Object> publisher = s -> {
      subscriber.set(s);
      s.onSubscribe(new org.reactivestreams.Subscription() {
        @Override
        public void request(long n) {
          requested.addAndGet(n);
        }

        @Override
        public void cancel() {
          cancelled.tryEmitEmpty();
        }
      });
    };
    reactor.core.Disposable send = c.outbound().send(publisher).subscribe();
    await(() -> requested.get() > 0);
    CountingMessage first = new CountingMessage(random(100, 1));
    subscriber.get().onNext(first);
    await(() -> first.releases.get() == 1); // sent
    await(() -> requested.get() > 1); // asked for the next
    send.dispose();
    StepVerifier.create(cancelled.asMono()).expectComplete().verify(WAIT);
    CountingMessage late = new CountingMessage(random(100, 2));
    subscriber.get().onNext(late);
    await(() -> late.releases.get() > 0);
    LockSupport.parkNanos(100_000_000); // a second release, were there one, would come about now
    assertThat(late.releases).as("releases of the item emitted after the cancel").hasValue(1);
    assertThat(first.releases).hasValue(1);
  }

  /**
   * Items are asked for by the credits they take, not one per credit: with the peer's 64 credits
   * granted and messages of 64 fragments, a send holds a message or two beyond the one going out,
   * not sixty (so a peer that grants, then withholds, cannot make it hold credits times
   * MAX_MESSAGE_SIZE of bytes).
   */
  @Test
  void aSendAsksForItemsByTheCreditsTheyTakeNotOnePerCredit() {
    int buffer = 1024;
    DisposableRdmaServer server = bind(server().option(RdmaOption.BUFFER_SIZE, buffer)
        .handle((in, out) -> in.receive().doOnNext(RdmaMessage::release).then()));
    RdmaConnection c = connect(client(server).option(RdmaOption.BUFFER_SIZE, buffer));
    AtomicInteger made = new AtomicInteger();
    AtomicInteger started = new AtomicInteger();
    AtomicInteger mostWaiting = new AtomicInteger();
    byte[] payload = random(64 * buffer, 3);
    Flux<OutboundMessage> messages = Flux.range(0, 16).map(i -> {
      mostWaiting.accumulateAndGet(made.incrementAndGet() - started.get(), Math::max);
      return new OutboundMessage() {
        private boolean copied;

        @Override
        public int length() {
          return payload.length;
        }

        @Override
        public void copyTo(long offset, java.lang.foreign.MemorySegment target, long targetOffset, int length) {
          if (!copied) {
            copied = true;
            started.incrementAndGet();
          }
          java.lang.foreign.MemorySegment.copy(payload, (int) offset, target, java.lang.foreign.ValueLayout.JAVA_BYTE,
              targetOffset, length);
        }

        @Override
        public void release() {
        }
      };
    });
    StepVerifier.create(c.outbound().send(messages)).expectComplete().verify(WAIT);
    assertThat(started).hasValue(16);
    assertThat(mostWaiting.get()).as("messages made and not yet going out, at most").isLessThanOrEqualTo(3);
  }

  @Test
  void inboundAcceptsOneSubscriber() {
    DisposableRdmaServer server = bind(server());
    RdmaConnection c = connect(client(server));
    c.inbound().receive().subscribe();
    StepVerifier.create(c.inbound().receive()).expectError(IllegalStateException.class).verify(WAIT);
  }
}
