package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.ResourceBusyException;
import io.rdmareactive.rdma.ResourceClosedException;
import io.rdmareactive.rdma.device.RdmaDevices;
import io.rdmareactive.rdma.spi.RdmaProvider;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

/**
 * Large messages and copies: a fragmented message is copied once on each side (into the send
 * buffers, then into memory sized from its declared length), and a message sent from memory the
 * user registered on the loops' protection domain is not copied at all, holds its region until
 * the device is done with it, and bad uses of it fail that send alone, typed, with nothing sent.
 */
public abstract class LargeMessageConformance extends RegisteredMemorySuite {
  private static final int BUFFER = 1024;

  private MemoryRegion region;

  @Override
  String loopsName() {
    return "conf-zcopy";
  }

  @Override
  long memorySize() {
    return 16 * BUFFER;
  }

  @Override
  int seed() {
    return 22;
  }

  @BeforeEach
  void registerTheRegion() {
    region = register(pd, memory);
  }

  private MemoryRegion register(ProtectionDomain on, MemorySegment m) {
    return register(on, m, Access.local());
  }

  private RdmaConnection client(DisposableRdmaServer server, int bufferSize) {
    return connect(client(server).runOn(loops).option(RdmaOption.BUFFER_SIZE, bufferSize));
  }


  /**
   * A fragmented message is copied once into the sender's buffers and once out of the receiver's,
   * into memory allocated at the length its first fragment declares: no byte twice, no growing.
   */
  @Test
  void aFragmentedMessageIsCopiedOnceOnEachSide() {
    byte[] message = random(7 * BUFFER / 2, 7);
    AtomicReference<RdmaConnection> serverSide = new AtomicReference<>();
    Sinks.One<byte[]> received = Sinks.one();
    DisposableRdmaServer server = bind(server().option(RdmaOption.BUFFER_SIZE, BUFFER).doOnConnection(serverSide::set)
        .handle((in, out) -> in.receiveBytes().take(1).doOnNext(received::tryEmitValue).then()));
    RdmaConnection c = client(server, BUFFER);
    StepVerifier.create(c.outbound().send(Mono.just(message))).expectComplete().verify(WAIT);
    assertThat(received.asMono().block(WAIT)).isEqualTo(message);
    assertThat(c.statistics().bytesCopied()).as("into the send buffers").isEqualTo(message.length);
    assertThat(serverSide.get().statistics().bytesCopied()).as("reassembled, each byte once")
        .isEqualTo(message.length);
    assertThat(c.statistics().bytesRead() + serverSide.get().statistics().bytesRead()).isZero();
  }

  /**
   * A fragmented message declares its length in its first SEND's header, not in its bytes, so a
   * message of whole buffers takes one SEND per buffer (4, not 5, as 64 KiB on the default 16 KiB
   * buffers), copied or from registered memory.
   */
  @Test
  void aMessageOfWholeBuffersTakesOneSendPerBuffer() {
    byte[] message = random(4 * BUFFER, 9);
    List<byte[]> received = new CopyOnWriteArrayList<>();
    DisposableRdmaServer server = bind(server().option(RdmaOption.BUFFER_SIZE, BUFFER)
        .handle((in, out) -> in.receiveBytes().doOnNext(received::add).then()));
    RdmaConnection c = client(server, BUFFER);
    StepVerifier.create(c.outbound().send(Mono.just(message))).expectComplete().verify(WAIT);
    await(() -> received.size() == 1 && c.statistics().messagesSent() == 1);
    assertThat(received.get(0)).isEqualTo(message);
    assertThat(c.statistics().dataSends()).as("SENDs for 4 buffers' worth").isEqualTo(4);
    RegisteredMessage m = OutboundMessage.of(region, 0, 3 * BUFFER);
    StepVerifier.create(c.outbound().send(Mono.just(m))).expectComplete().verify(WAIT);
    StepVerifier.create(m.released()).expectComplete().verify(WAIT);
    await(() -> received.size() == 2 && c.statistics().messagesSent() == 2);
    assertThat(received.get(1)).isEqualTo(bytesAt(0, 3 * BUFFER));
    assertThat(c.statistics().dataSends()).as("and 3 more from registered memory").isEqualTo(7);
  }

  /**
   * A message that the publisher given to send() drops itself (here a filter; a publishOn queue
   * at a cancel alike) was given to send() all the same: it is released, so its memory's lease
   * ends, and the one sent is released once its SEND completed.
   */
  @Test
  void messagesThePublishersOwnOperatorsDropAreReleased() {
    DisposableRdmaServer server = bind(server().option(RdmaOption.BUFFER_SIZE, BUFFER)
        .handle((in, out) -> in.receive().doOnNext(RdmaMessage::release).then()));
    RdmaConnection c = client(server, BUFFER);
    RegisteredMessage dropped = OutboundMessage.of(region, 0, BUFFER);
    RegisteredMessage sent = OutboundMessage.of(region, BUFFER, BUFFER);
    StepVerifier.create(c.outbound().send(Flux.just(dropped, sent).filter(m -> m == sent))).expectComplete().verify(WAIT);
    StepVerifier.create(dropped.released()).as("dropped by the filter").expectComplete().verify(WAIT);
    StepVerifier.create(sent.released()).as("sent").expectComplete().verify(WAIT);
  }

  /**
   * The length a first fragment declares fills the header bits that other SENDs use as grants,
   * flags and reserved bits (all of them for 2 MiB - 1: 16 grant bits, CREDIT, BATCH, RNDV, DONE
   * and bit 21): it is read as a length, by its place among the SENDs, and the message arrives
   * whole, the one after it too.
   */
  @Test
  void aLengthOverTheHeadersFlagBitsIsReadAsALength() {
    int length = 0x1F_FFFF;
    int flags = Protocol.CREDIT | Protocol.BATCH | Protocol.RNDV | Protocol.DONE;
    assertThat(Protocol.firstFragment(length)).isEqualTo(Protocol.GRANT_MASK | Protocol.MORE | flags | 1 << 21);
    byte[] message = random(length, 11);
    Sinks.One<List<byte[]>> received = Sinks.one();
    DisposableRdmaServer server = bind(server().option(RdmaOption.BUFFER_SIZE, 16 * BUFFER)
        .handle((in, out) -> in.receiveBytes().take(2).collectList().doOnNext(received::tryEmitValue).then()));
    RdmaConnection c = client(server, 16 * BUFFER);
    StepVerifier.create(c.outbound().send(Flux.just(message, new byte[] {1, 2, 3}))).expectComplete().verify(WAIT);
    List<byte[]> both = received.asMono().block(WAIT);
    assertThat(both.get(0)).isEqualTo(message);
    assertThat(both.get(1)).as("the message after it, whole and plain").containsExactly(1, 2, 3);
  }

  /**
   * Messages from registered memory, empty, small, one buffer's worth and fragmented, arrive
   * whole and in order with no byte copied by the sender; each is released once its SENDs
   * completed, and the region can then be deregistered.
   */
  @Test
  void messagesFromRegisteredMemoryAreSentWithoutACopy() {
    int[][] slices = {{0, 0}, {3, 1}, {100, 200}, {BUFFER, BUFFER}, {5, BUFFER + 1}, {7, 5 * BUFFER + 13}};
    List<byte[]> received = new CopyOnWriteArrayList<>();
    DisposableRdmaServer server = bind(server().option(RdmaOption.BUFFER_SIZE, BUFFER)
        .handle((in, out) -> in.receiveBytes().doOnNext(received::add).then()));
    RdmaConnection c = client(server, BUFFER);
    List<RegisteredMessage> messages = new ArrayList<>();
    long total = 0;
    for (int[] s : slices) {
      messages.add(OutboundMessage.of(region, s[0], s[1]));
      total += s[1];
    }
    StepVerifier.create(c.outbound().send(Flux.fromIterable(messages))).expectComplete().verify(WAIT);
    StepVerifier.create(Mono.when(messages.stream().map(RegisteredMessage::released).toList()))
        .expectComplete().verify(WAIT);
    await(() -> received.size() == slices.length);
    for (int i = 0; i < slices.length; i++) {
      assertThat(received.get(i)).as("message %d", i).isEqualTo(bytesAt(slices[i][0], slices[i][1]));
    }
    RdmaStatistics s = c.statistics();
    assertThat(s.bytesCopied()).as("bytes the sender copied").isZero();
    assertThat(s.bytesSent()).isEqualTo(total);
    assertThat(s.messagesSent()).isEqualTo(slices.length);
    // A fragmented one again, after the rest completed: still nothing copied.
    StepVerifier.create(c.outbound().send(Mono.just(OutboundMessage.of(region, 0, 3 * BUFFER))))
        .expectComplete().verify(WAIT);
    assertThat(c.statistics().bytesCopied()).isZero();
  }

  /**
   * Messages gathered from up to three ranges of a region (as an RSocket frame's header, metadata
   * and data) arrive as one message each, byte-exact, whatever fragment boundaries cut the ranges,
   * with no byte copied and never by rendezvous (there is no one range to expose); each one's
   * release callback runs once, after its SENDs completed.
   */
  @Test
  void messagesGatheredFromSeveralRangesAreSentWithoutACopy() {
    long[][] offsets = {{0, 40, 9000}, {100, 5000}, {BUFFER - 7, 3 * BUFFER, 11 * BUFFER}, {64, 64, 0}};
    int[][] lengths = {{9, 3, 3 * BUFFER + 5}, {BUFFER - 4, 2 * BUFFER + 1}, {7, 2 * BUFFER - 3, 4 * BUFFER}, {0, 5, 0}};
    List<byte[]> received = new CopyOnWriteArrayList<>();
    AtomicReference<RdmaConnection> serverSide = new AtomicReference<>();
    DisposableRdmaServer server = bind(server().option(RdmaOption.BUFFER_SIZE, BUFFER).doOnConnection(serverSide::set)
        .handle((in, out) -> in.receiveBytes().doOnNext(received::add).then()));
    RdmaConnection c = connect(client(server).runOn(loops).option(RdmaOption.BUFFER_SIZE, BUFFER)
        .option(RdmaOption.RENDEZVOUS_THRESHOLD, 2 * BUFFER));
    java.util.concurrent.atomic.AtomicIntegerArray releases = new java.util.concurrent.atomic.AtomicIntegerArray(offsets.length);
    List<RegisteredMessage> messages = new ArrayList<>();
    for (int i = 0; i < offsets.length; i++) {
      int n = i;
      messages.add(OutboundMessage.gather(region, offsets[i], lengths[i], () -> releases.incrementAndGet(n)));
    }
    assertThat(messages.getFirst().ranges()).isEqualTo(3);
    StepVerifier.create(c.outbound().send(Flux.fromIterable(messages))).expectComplete().verify(WAIT);
    StepVerifier.create(Mono.when(messages.stream().map(RegisteredMessage::released).toList()))
        .expectComplete().verify(WAIT);
    await(() -> received.size() == offsets.length);
    for (int i = 0; i < offsets.length; i++) {
      java.io.ByteArrayOutputStream expected = new java.io.ByteArrayOutputStream();
      for (int r = 0; r < offsets[i].length; r++) {
        expected.writeBytes(bytesAt(offsets[i][r], lengths[i][r]));
      }
      assertThat(received.get(i)).as("message %d", i).isEqualTo(expected.toByteArray());
      assertThat(releases.get(i)).as("release callbacks of message %d", i).isEqualTo(1);
    }
    assertThat(c.statistics().bytesCopied()).as("bytes the sender copied").isZero();
    assertThat(serverSide.get().statistics().bytesRead()).as("no rendezvous for a gathered message").isZero();
  }

  /** Gathers from no range, too many, or outside the region are refused when made, typed. */
  @Test
  void badGathersAreRefusedWhenMade() {
    int[] tooMany = new int[RegisteredMessage.MAX_RANGES + 1];
    assertThatThrownBy(() -> OutboundMessage.gather(region, new long[tooMany.length], tooMany, null))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ranges");
    assertThatThrownBy(() -> OutboundMessage.gather(region, new long[0], new int[0], null))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> OutboundMessage.gather(region, new long[] {0, 1}, new int[] {1}, null))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> OutboundMessage.gather(region, new long[] {0, 16 * BUFFER - 4}, new int[] {1, 5}, null))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> OutboundMessage.gather(region, new long[] {-1}, new int[] {1}, null))
        .isInstanceOf(IndexOutOfBoundsException.class);
  }

  /**
   * The region cannot be deregistered while a message from it is with the transport: a message
   * stalled half sent (the receiver has no subscriber yet, so only its credit reserve comes back
   * and the sender keeps its last credit for updates) keeps it, and closing it fails with EBUSY;
   * once a subscriber asks, the message completes, is released, and the region closes.
   */
  @Test
  void aRegionStaysRegisteredWhileAMessageFromItIsInFlight() {
    int size = 8 * BUFFER;
    Sinks.Empty<Void> gate = Sinks.empty();
    List<byte[]> received = new CopyOnWriteArrayList<>();
    DisposableRdmaServer server = bind(server().option(RdmaOption.BUFFER_SIZE, BUFFER)
        .handle((in, out) -> gate.asMono().thenMany(in.receiveBytes()).doOnNext(received::add).then()));
    RdmaConnection c = client(server, BUFFER);
    MemorySegment own = arena.allocate(size, 4096);
    own.fill((byte) 9);
    MemoryRegion stalled = register(pd, own);
    RegisteredMessage m = OutboundMessage.of(stalled, 0, size);
    Mono<Void> sending = c.outbound().send(Mono.just(m)).cache();
    sending.subscribe(null, e -> { });
    await(() -> c.statistics().bytesSent() > 0 && c.statistics().creditStalls() > 0); // taken, part sent, stalled
    assertThat(c.statistics().bytesSent()).as("part of it").isLessThan(size);
    assertThatThrownBy(stalled::close).isInstanceOf(ResourceBusyException.class);
    assertThat(stalled.isClosed()).isFalse();
    gate.tryEmitEmpty();
    StepVerifier.create(sending.then(m.released())).expectComplete().verify(WAIT);
    await(() -> received.size() == 1);
    assertThat(received.get(0)).isEqualTo(own.toArray(ValueLayout.JAVA_BYTE));
    stalled.close();
    regions.remove(stalled);
  }

  /**
   * Bad uses fail at once or fail their send alone, typed, with nothing sent and the region not
   * held: a range outside the region, a deregistered region, a region of another protection
   * domain, a message sent twice. The connection goes on.
   */
  @Test
  void badRegisteredMessagesFailTheirSendAloneAndSendNothing() {
    List<byte[]> received = new CopyOnWriteArrayList<>();
    DisposableRdmaServer server = bind(server().option(RdmaOption.BUFFER_SIZE, BUFFER)
        .handle((in, out) -> in.receiveBytes().doOnNext(received::add).then()));
    RdmaConnection c = client(server, BUFFER);
    long size = memory.byteSize();
    assertThatThrownBy(() -> OutboundMessage.of(region, -1, 10)).isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> OutboundMessage.of(region, size - 4, 5)).isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> OutboundMessage.of(region, 0, -1)).isInstanceOf(IndexOutOfBoundsException.class);

    MemoryRegion gone = register(pd, arena.allocate(BUFFER, 4096));
    RegisteredMessage late = OutboundMessage.of(gone, 0, BUFFER);
    gone.close();
    assertThatThrownBy(() -> OutboundMessage.of(gone, 0, 1)).isInstanceOf(ResourceClosedException.class);
    StepVerifier.create(c.outbound().send(Mono.just(late))).expectError(ResourceClosedException.class).verify(WAIT);
    StepVerifier.create(late.released()).expectComplete().verify(WAIT);

    RdmaLoopResources others = RdmaLoopResources.create("conf-zcopy-other", 1);
    try {
      RdmaProvider provider = RdmaDevices.provider(fixture().provider());
      ProtectionDomain otherPd = others.protectionDomain(provider, provider.devices().getFirst().name());
      MemoryRegion foreign = otherPd.registerMemory(arena.allocate(BUFFER, 4096), Access.local());
      RegisteredMessage wrongPd = OutboundMessage.of(foreign, 0, BUFFER);
      StepVerifier.create(c.outbound().send(Mono.just(wrongPd)))
          .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(IllegalArgumentException.class)
              .hasMessageContaining("another protection domain"))
          .verify(WAIT);
      foreign.close(); // not held: the failed send let it go
    } finally {
      StepVerifier.create(others.disposeLater()).expectComplete().verify(WAIT);
    }

    RegisteredMessage once = OutboundMessage.of(region, 0, 16);
    StepVerifier.create(c.outbound().send(Mono.just(once))).expectComplete().verify(WAIT);
    StepVerifier.create(c.outbound().send(Mono.just(once))).expectError(IllegalStateException.class).verify(WAIT);

    StepVerifier.create(c.outbound().sendString(Mono.just("still up"))).expectComplete().verify(WAIT);
    await(() -> received.size() == 2);
    assertThat(received.get(0)).isEqualTo(bytesAt(0, 16));
    assertThat(utf8(received.get(1))).isEqualTo("still up");
    assertThat(c.statistics().messagesSent()).as("only the good ones went").isEqualTo(2);
  }
}
