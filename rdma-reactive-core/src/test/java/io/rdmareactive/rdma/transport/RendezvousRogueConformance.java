package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.ProtocolViolationException;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

/**
 * Rogue peers of the rendezvous, as the victim reads and as it sends: a descriptor naming memory
 * its key does not open, or more than the maximum, loses the rogue its connection only, typed,
 * before anything is allocated for the oversized one; a rogue that READs beyond what it was told
 * gets a remote access error (this test posts that READ itself); one that never says DONE fails
 * the victim's send after the deadline, and the message is released; one that leaves in the
 * middle of a READ leaves nothing behind (every test checks that nothing leaked).
 */
public abstract class RendezvousRogueConformance extends RegisteredMemorySuite {
  private static final int LENGTH = 2000;

  private MemoryRegion region;

  @Override
  String loopsName() {
    return "conf-rndv-rogue";
  }

  @Override
  long memorySize() {
    return 8192;
  }

  @Override
  int seed() {
    return 24;
  }

  @BeforeEach
  void registerTheRegion() {
    region = register(pd, memory, EnumSet.of(Access.LOCAL_WRITE, Access.MW_BIND));
  }

  private RoguePeer rogueOf(DisposableRdmaServer server) {
    return RoguePeer.connect(fixture().connections(), new InetSocketAddress(fixture().host(), server.port()), 8, WAIT);
  }

  /** The header of a descriptor (or another SEND) on no grant. */
  private static final int RNDV = Protocol.immediate(0, false, false) | Protocol.RNDV;

  @Test
  void aDescriptorWhoseKeyOpensNothingLosesTheRogueItsConnectionOnly() {
    rogueBreaksTheProtocol(rogue -> {
      MemoryRegion local = rogue.readable(new byte[64]);
      rogue.sendOnACredit(RNDV, rogue.describe(1, 64, local.address(), local.remoteKey() ^ 0x5A5A00), WAIT);
    }, "could not read");
  }

  @Test
  void aDescriptorReachingBeyondTheRoguesMemoryLosesItItsConnectionOnly() {
    rogueBreaksTheProtocol(rogue -> {
      MemoryRegion r = rogue.readable(new byte[4096]);
      rogue.sendOnACredit(RNDV, rogue.describe(1, 4096, r.address() + 100, r.remoteKey()), WAIT);
    }, "could not read");
  }

  @Test
  void aDescriptorAboveTheMaximumIsRefusedBeforeAnythingIsAllocated() {
    AtomicReference<RdmaConnection> victim = rogueBreaksTheProtocol(rogue -> {
      MemoryRegion r = rogue.readable(new byte[64]);
      rogue.sendOnACredit(RNDV, rogue.describe(1, 1 << 20, r.address(), r.remoteKey()), WAIT);
    }, "declared a rendezvous message of 1048576 bytes");
    assertThat(victim.get().statistics().bytesRead()).isZero();
  }

  @Test
  void aDescriptorOfTheWrongLengthLosesTheRogueItsConnectionOnly() {
    rogueBreaksTheProtocol(rogue -> rogue.sendOnACredit(RNDV, 8, WAIT), "descriptor of 8 bytes");
  }

  /**
   * A server that sends the rogue a message from registered memory by rendezvous (closing after
   * {@code closeTimeout} at most): the rogue gets the descriptor, {@code act} misbehaves with it,
   * and the victim's send fails, its message released.
   */
  private void victimSends(Duration closeTimeout, java.util.function.BiConsumer<RoguePeer, ByteBuffer> act,
      Consumer<Throwable> sendFailure) {
    RegisteredMessage message = OutboundMessage.of(region, 100, LENGTH);
    Sinks.One<Throwable> sendSaw = Sinks.one();
    DisposableRdmaServer server = bind(server().runOn(loops).option(RdmaOption.RENDEZVOUS_THRESHOLD, 1000)
        .option(RdmaOption.CLOSE_TIMEOUT, closeTimeout)
        .handle((in, out) -> out.send(Mono.just(message)).doOnError(sendSaw::tryEmitValue).onErrorResume(e -> Mono.empty())));
    try (RoguePeer rogue = rogueOf(server)) {
      RoguePeer.Received descriptor = rogue.awaitSend(WAIT);
      assertThat(descriptor).as("a descriptor").isNotNull();
      assertThat(descriptor.immediate() & Protocol.RNDV).isNotZero();
      assertThat(descriptor.bytes()).hasSize(Protocol.DESCRIPTOR);
      ByteBuffer d = ByteBuffer.wrap(descriptor.bytes());
      assertThat(d.getInt(4)).as("its length").isEqualTo(LENGTH);
      act.accept(rogue, d);
      StepVerifier.create(sendSaw.asMono()).assertNext(sendFailure).expectComplete().verify(WAIT);
      StepVerifier.create(message.released()).expectComplete().verify(WAIT);
    }
  }

  @Test
  void aRogueReadingBeyondTheAdvertisedBytesGetsARemoteAccessError() {
    // The access error moves the victim's QP to error. With a receive queue of its own its flushed
    // receives fail the connection at once; on a shared receive queue nothing is flushed (the
    // receives stay in the SRQ, and rxe raises no QP_ACCESS_ERR for the responder), so the victim
    // fails the send when DONE is overdue: a close timeout well inside WAIT.
    victimSends(Duration.ofSeconds(10), (rogue, d) -> {
      long address = d.getLong(8);
      int key = d.getInt(16);
      assertThat(rogue.read(address, key, LENGTH, WAIT)).as("a READ of what was advertised")
          .isEqualTo(WorkCompletion.Status.SUCCESS);
      assertThat(rogue.lastRead).isEqualTo(memory.asSlice(100, LENGTH).toArray(ValueLayout.JAVA_BYTE));
      assertThat(rogue.read(address, key, LENGTH + 1, WAIT)).as("a READ of one byte more")
          .isEqualTo(WorkCompletion.Status.REM_ACCESS_ERR);
    }, e -> assertThat(e).isInstanceOf(io.rdmareactive.rdma.ConnectionException.class));
  }

  @Test
  void aRogueThatNeverSaysDoneFailsTheSendAfterTheDeadlineAndTheMessageIsReleased() {
    victimSends(Duration.ofSeconds(1), (rogue, d) -> { }, e -> assertThat(e)
        .isInstanceOf(ProtocolViolationException.class).hasMessageContaining("did not finish reading"));
  }

  @Test
  void aRogueLeavingInTheMiddleOfAReadLeavesNothingBehind() {
    AtomicReference<RdmaConnection> victim = new AtomicReference<>();
    DisposableRdmaServer server = bind(server().doOnConnection(victim::set)
        .handle((in, out) -> in.receive().doOnNext(RdmaMessage::release).onErrorResume(e -> Mono.empty()).then()));
    try (RoguePeer rogue = rogueOf(server)) {
      long deadline = System.nanoTime() + WAIT.toNanos();
      while ((victim.get() == null || victim.get().statistics().creditUpdatesSent() == 0) && System.nanoTime() < deadline) {
        LockSupport.parkNanos(1_000_000);
      }
      MemoryRegion r = rogue.readable(random(1 << 20, 25));
      rogue.sendOnACredit(RNDV, rogue.describe(1, 1 << 20, r.address(), r.remoteKey()), WAIT);
    } // gone, its memory with it, while the victim reads or is about to
    StepVerifier.create(victim.get().onDispose()).expectComplete().verify(WAIT);
  }
}
