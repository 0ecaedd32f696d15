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

/** Rogue peers: a peer that breaks the protocol or floods loses its own connection only, and the heap stays bounded. */
public abstract class RoguePeerConformance extends TransportSuite {


  @Test
  void aPeerGrantingMoreCreditsThanItHasBuffersLosesItsConnectionOnly() {
    rogueBreaksTheProtocol(rogue -> rogue.send(Protocol.immediate(0xFFFF, false, false), 8), "more than the");
  }

  /**
   * A handler whose receive() subscriber is still inside onSubscribe (on its own thread) when its
   * connection fails: the close waits for it (within the flush wait), so that it gets the typed
   * error before the connection's onDispose cancels the handler. With the close first, the error
   * was lost whenever the cancel beat the loop's drain (1 run in 4 under load).
   */
  @Test
  void aSubscriberStillInsideOnSubscribeWhenItsConnectionFailsGetsTheErrorFirst() {
    java.util.concurrent.CountDownLatch inOnSubscribe = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch letGo = new java.util.concurrent.CountDownLatch(1);
    Sinks.One<Throwable> victimSaw = Sinks.one();
    AtomicReference<RdmaConnection> victim = new AtomicReference<>();
    DisposableRdmaServer server = bind(server().doOnConnection(victim::set)
        .handle((in, out) -> in.receive().doOnSubscribe(s -> {
              inOnSubscribe.countDown();
              try {
                letGo.await(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS); // the handler's own thread (boundedElastic)
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            }).doOnNext(RdmaMessage::release)
            .doOnError(victimSaw::tryEmitValue).onErrorResume(e -> Mono.empty()).then()));
    try (RoguePeer rogue = RoguePeer.connect(fixture().connections(), new InetSocketAddress(fixture().host(), server.port()), 8, WAIT)) {
      await(() -> inOnSubscribe.getCount() == 0); // the handler is inside onSubscribe
      rogue.send(1 << 30, 8); // reserved header bits: a protocol violation, within the reserve's credits
      await(() -> victim.get().statistics().creditViolations() > 0);
      assertThat(victim.get().statistics().creditViolations()).as("the violation counted").isEqualTo(1);
      // Room for a close that would not wait (it took under a millisecond before it did).
      LockSupport.parkNanos(Duration.ofMillis(300).toNanos());
      assertThat(victim.get().isDisposed()).as("closed while its subscriber was still inside onSubscribe").isFalse();
      letGo.countDown();
      StepVerifier.create(victimSaw.asMono())
          .assertNext(e -> assertThat(e).isInstanceOf(io.rdmareactive.rdma.ProtocolViolationException.class)
              .hasMessageContaining("without a valid rdma-reactive header"))
          .expectComplete()
          .verify(WAIT);
      StepVerifier.create(victim.get().onDispose()).expectComplete().verify(WAIT);
    } finally {
      letGo.countDown();
    }
  }

  @Test
  void aPeerSendingReservedHeaderBitsLosesItsConnectionOnly() {
    rogueBreaksTheProtocol(rogue -> rogue.send(1 << 30, 8), "without a valid rdma-reactive header");
  }

  @Test
  void aPeerSendingACreditUpdateWithAPayloadLosesItsConnectionOnly() {
    rogueBreaksTheProtocol(rogue -> rogue.send(Protocol.immediate(0, false, true), 100), "credit update with a payload");
  }

  @Test
  void aPeerSendingAMessageAboveTheMaximumLosesItsConnectionOnly() {
    // Fragments of 4 KiB declaring 16 KiB against a maximum of 8 KiB: refused at the first
    // fragment, before any allocation.
    rogueBreaksTheProtocol(rogue -> {
      rogue.send(Protocol.firstFragment(4L * RoguePeer.BUFFER), RoguePeer.BUFFER);
      for (int i = 1; i < 4; i++) {
        rogue.send(Protocol.immediate(0, true, false), RoguePeer.BUFFER);
      }
    }, "declared a message of 16384 bytes");
  }

  /**
   * A first fragment's header is its message's length (wire protocol v5), read as nothing else:
   * length bits where other headers have reserved bits, the CREDIT flag or DONE are a length,
   * checked as one, and never reach the credit or rendezvous paths.
   */
  @Test
  void aFirstFragmentsLengthIsNeverReadAsFlags() {
    // bit 30 of the header is the length's bit 29: a declared 512 MiB, not a reserved bit
    rogueBreaksTheProtocol(rogue -> rogue.send(Protocol.firstFragment(1L << 29), RoguePeer.BUFFER),
        "declared a message of 536870912 bytes");
    // CREDIT's place and two grants' worth, no payload: an empty fragment, not a credit update
    rogueBreaksTheProtocol(rogue -> rogue.send(Protocol.firstFragment((1 << 16) | 2), 0), "an empty fragment");
    // DONE's place with a DONE's 4 bytes: a message too large, never a rendezvous answer
    rogueBreaksTheProtocol(rogue -> rogue.send(Protocol.firstFragment(1 << 19), Protocol.DONE_LENGTH),
        "declared a message of 524288 bytes");
  }

  /**
   * After a fragment broke the protocol, what the peer sends as the rest of that message is
   * dropped, not delivered: a tail of a message is no message of its own. Two SENDs, the two
   * credits every peer starts with.
   */
  @Test
  void theRestOfABrokenMessageIsNotDeliveredAsAMessage() {
    AtomicReference<RdmaConnection> victim = rogueBreaksTheProtocol(rogue -> {
      rogue.send(Protocol.firstFragment(10), RoguePeer.BUFFER); // more than it declares: broken
      rogue.send(Protocol.immediate(0, false, false), 100); // its "last fragment"
    }, "it sent more than the 10 bytes its message declared");
    assertThat(victim.get().statistics().messagesReceived()).as("messages delivered").isZero();
  }

  @Test
  void aPeerWhoseFirstFragmentCarriesMoreThanItDeclaresLosesItsConnectionOnly() {
    rogueBreaksTheProtocol(rogue -> rogue.send(Protocol.firstFragment(10), RoguePeer.BUFFER),
        "it sent more than the 10 bytes its message declared");
  }

  @Test
  void aPeerSendingAWholeMessageAboveTheMaximumLosesItsConnectionOnly() {
    // One SEND of 4 KiB against a maximum of 1,000 bytes: it fits the victim's 16 KiB buffer.
    rogueBreaksTheProtocol(1000, rogue -> rogue.send(Protocol.immediate(0, false, false), RoguePeer.BUFFER),
        "a message of 4096 bytes, above the maximum of 1000");
  }

  @Test
  void aPeerWritingWithImmediateInsteadOfSendingLosesItsConnectionOnly() {
    // It consumes a receive and leaves the buffer's stale bytes in it: they must not be delivered.
    rogueBreaksTheProtocol(rogue -> rogue.writeWithImmediate(Protocol.immediate(0, false, false)),
        "RDMA WRITE with immediate");
  }

  /** A batch's bytes: {@code count}, then each {@code (length, bytes)} pair as given (big-endian ints). */
  static byte[] batch(int count, Object... lengthsAndBytes) {
    ByteBuffer b = ByteBuffer.allocate(RoguePeer.BUFFER).putInt(count);
    for (Object o : lengthsAndBytes) {
      if (o instanceof Integer n) {
        b.putInt(n);
      } else {
        b.put(((String) o).getBytes(StandardCharsets.UTF_8));
      }
    }
    return java.util.Arrays.copyOf(b.array(), b.position());
  }

  void rogueSendsABatch(byte[] batch, String violation) {
    rogueBreaksTheProtocol(rogue -> rogue.send(Protocol.immediate(0, false, false) | Protocol.BATCH, rogue.write(batch)),
        violation);
  }

  @Test
  void aPeerSendingABatchWhoseLengthOverrunsItLosesItsConnectionOnly() {
    rogueSendsABatch(batch(2, 3, "abc", 100, "defg"), "length prefix of 100 bytes in a batch that overruns it (4 bytes left)");
  }

  @Test
  void aPeerSendingABatchWhoseCountDoesNotMatchItsBytesLosesItsConnectionOnly() {
    rogueSendsABatch(batch(3, 3, "abc", 4, "defg"), "declaring 3 messages whose bytes end after 2");
  }

  @Test
  void aPeerSendingABatchWithBytesAfterItsCountLosesItsConnectionOnly() {
    rogueSendsABatch(batch(1, 3, "abc", 4, "defg"), "declaring 1 messages with 8 bytes after them");
  }

  @Test
  void aPeerSendingABatchWithAnEmptyMessageLosesItsConnectionOnly() {
    rogueSendsABatch(batch(2, 3, "abc", 0), "a message of length 0 in a batch");
  }

  @Test
  void aPeerSendingABatchWithANegativeLengthLosesItsConnectionOnly() {
    rogueSendsABatch(batch(2, 3, "abc", -4, "defg"), "a message of length -4 in a batch");
  }

  @Test
  void aPeerSendingABatchWithANegativeCountLosesItsConnectionOnly() {
    rogueSendsABatch(batch(-1, 3, "abc"), "a batch declaring -1 messages");
  }

  @Test
  void aPeerSendingABatchFlagOnAFragmentLosesItsConnectionOnly() {
    rogueBreaksTheProtocol(rogue -> {
      // a first fragment's header is its length (no flags): the batch flag comes on the second
      rogue.send(Protocol.firstFragment(2L * RoguePeer.BUFFER), RoguePeer.BUFFER);
      rogue.send(Protocol.immediate(0, true, false) | Protocol.BATCH, RoguePeer.BUFFER);
    }, "a batch flag on a fragment");
  }

  @Test
  void aPeerSendingABatchInTheMiddleOfAFragmentedMessageLosesItsConnectionOnly() {
    rogueBreaksTheProtocol(rogue -> {
      rogue.send(Protocol.firstFragment(2L * RoguePeer.BUFFER), RoguePeer.BUFFER);
      rogue.sendFromSecondHalf(Protocol.immediate(0, false, false) | Protocol.BATCH, batch(1, 3, "abc"));
    }, "a batch flag on a fragment");
  }

  @Test
  void aPeerSendingABatchFlagOnACreditUpdateLosesItsConnectionOnly() {
    rogueBreaksTheProtocol(rogue -> rogue.send(Protocol.immediate(2, false, true) | Protocol.BATCH, 0),
        "credit update with a payload, a fragment or a batch flag");
  }

  @Test
  void aPeerSendingABatchedMessageAboveTheMaximumLosesItsConnectionOnly() {
    String big = "x".repeat(2000);
    rogueBreaksTheProtocol(1000, rogue -> rogue.send(Protocol.immediate(0, false, false) | Protocol.BATCH,
        rogue.write(batch(2, 3, "abc", 2000, big))), "a message of 2000 bytes in a batch, above the maximum of 1000 bytes");
  }

  /** The same decoder reads a well-formed batch from a peer that is not this library: a message each, in order. */
  @Test
  void aWellFormedBatchFromAnotherPeerIsDeliveredAsItsMessages() {
    Sinks.Many<String> got = Sinks.many().replay().all();
    DisposableRdmaServer server = bind(server().handle((in, out) -> in.receiveString().doOnNext(got::tryEmitNext)
        .onErrorResume(e -> Mono.empty()).then()));
    try (RoguePeer rogue = RoguePeer.connect(fixture().connections(), new InetSocketAddress(fixture().host(), server.port()), 8, WAIT)) {
      rogue.sendOnACredit(Protocol.immediate(0, false, false) | Protocol.BATCH,
          rogue.write(batch(3, 3, "abc", 1, "d", 5, "efghi")), WAIT);
      StepVerifier.create(got.asFlux().take(3)).expectNext("abc", "d", "efghi").expectComplete().verify(WAIT);
    }
  }

  /**
   * Grants on a SEND that may arrive before the victim read the hello saying this peer has 8
   * buffers (seen on rxe0: the victim counted 65,537 credits when the hello came) are checked when
   * it comes: the connection fails with the violation, counted, instead of the victim sending on
   * credits the peer never had.
   */
  @Test
  void aPeerGrantingBeyondItsBuffersBeforeTheVictimStartedLosesItsConnectionOnly() {
    AtomicReference<RdmaConnection> victim = new AtomicReference<>();
    DisposableRdmaServer server = bind(server().doOnConnection(victim::set)
        .handle((in, out) -> Mono.when(out.send(Flux.range(0, 100).map(i -> new byte[64])).onErrorResume(e -> Mono.empty()),
            in.receive().doOnNext(RdmaMessage::release).onErrorResume(e -> Mono.empty()).then())));
    try (RoguePeer rogue = RoguePeer.connect(fixture().connections(), new InetSocketAddress(fixture().host(), server.port()), 8, WAIT)) {
      rogue.send(Protocol.immediate(0xFFFF, false, false), 8); // at once, on the reserve credit
      long deadline = System.nanoTime() + WAIT.toNanos();
      while (victim.get() == null && System.nanoTime() < deadline) {
        LockSupport.parkNanos(1_000_000);
      }
      StepVerifier.create(victim.get().onDispose()).expectComplete().verify(WAIT);
      assertThat(victim.get().statistics().creditViolations()).as("the over-grant, counted").isEqualTo(1);
    }
    RdmaConnection good = connect(client(server));
    StepVerifier.create(good.outbound().sendString(Mono.just("fine")).then()).expectComplete().verify(WAIT);
  }

  /**
   * A handler without demand still reposts its reserve receives and grants them: a rogue that
   * answers each credit update with two of its own, each granting back the one receive it
   * reposted, would keep the victim's loop answering forever. A credit update grants at least
   * two, so the first that grants fewer ends the connection.
   */
  @Test
  void aPeerPingPongingCreditUpdatesWithAHandlerWithoutDemandLosesItsConnectionOnly() {
    WithoutDemand handler = new WithoutDemand();
    AtomicReference<RdmaConnection> victim = new AtomicReference<>();
    DisposableRdmaServer server = bind(server().doOnConnection(victim::set)
        .handle((in, out) -> {
          in.receive().subscribe(handler);
          return Mono.never();
        }));
    long updates = 1000;
    long sent;
    try (RoguePeer rogue = RoguePeer.connect(fixture().connections(), new InetSocketAddress(fixture().host(), server.port()), 8, WAIT)) {
      StepVerifier.create(handler.subscribed()).expectComplete().verify(WAIT);
      sent = rogue.sendCreditUpdatesWithinCredits(updates, fixture().rogueStall());
      StepVerifier.create(victim.get().onDispose()).expectComplete().verify(WAIT);
    }
    RdmaStatistics stats = victim.get().statistics();
    System.out.printf("%s: a rogue ping-ponging credit updates got %d of %d in; the victim sent %d updates%n",
        fixture().provider(), sent, updates, stats.creditUpdatesSent());
    assertThat(sent).as("credit updates the victim let in of %d", updates).isLessThan(10);
    assertThat(stats.creditViolations()).isEqualTo(1);
    RdmaConnection good = connect(client(server));
    StepVerifier.create(good.outbound().sendString(Mono.just("fine")).then()).expectComplete().verify(WAIT);
  }

  @Test
  void aPeerFloodingAHandlerThatNeverRequestsStallsOnCreditsAndTheHeapStaysBounded() {
    floodAHandlerThatNeverRequests(1);
  }

  @Test
  void aPeerFloodingFragmentedMessagesAtAHandlerThatNeverRequestsStallsOnCreditsAndTheHeapStaysBounded() {
    floodAHandlerThatNeverRequests(4);
  }

  /**
   * A rogue that keeps to its credits to the letter (using the last one too) tries {@link
   * #fixture().rogueMessages()} messages of {@code fragments} SENDs at a handler that subscribed and never
   * requests: the victim holds at most its receive buffers' worth of messages, stops granting, the
   * rogue stalls, and the retained heap does not grow with what it tried to send.
   */
  void floodAHandlerThatNeverRequests(int fragments) {
    int bufferCount = 8;
    long n = fixture().rogueMessages();
    Sinks.Empty<Void> subscribed = Sinks.empty();
    AtomicReference<RdmaConnection> victim = new AtomicReference<>();
    DisposableRdmaServer server = bind(server().option(RdmaOption.BUFFER_COUNT, bufferCount)
        .doOnConnection(victim::set)
        .handle((in, out) -> {
          in.receive().subscribe(new reactor.core.publisher.BaseSubscriber<RdmaMessage>() {
            @Override
            protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
              subscribed.tryEmitEmpty(); // and no request, ever
            }
          });
          return Mono.never();
        }));
    long sends;
    long before;
    long after;
    try (RoguePeer rogue = RoguePeer.connect(fixture().connections(), new InetSocketAddress(fixture().host(), server.port()), 8, WAIT)) {
      StepVerifier.create(subscribed.asMono()).expectComplete().verify(WAIT);
      before = retainedHeap();
      sends = rogue.sendWithinCredits(n, fragments, RoguePeer.BUFFER, fixture().rogueStall());
      after = retainedHeap();
      RdmaStatistics s = victim.get().statistics();
      System.out.printf("%s: a rogue tried %d messages of %d x %d B at a handler that never requests: %d SENDs let in,"
          + " %d messages held, retained heap %+d KiB%n", fixture().provider(), n, fragments, RoguePeer.BUFFER, sends,
          s.messagesReceived(), (after - before) / 1024);
      // Whole messages wait for the subscriber; a fragmented one's pieces are in its reassembly.
      long held = bufferCount + Protocol.RESERVE;
      assertThat(s.messagesReceived()).as("messages the victim holds for a subscriber without demand")
          .isLessThanOrEqualTo(held);
      assertThat(sends).as("SENDs the victim let in of the %d x %d it was offered", n, fragments)
          .isLessThanOrEqualTo((held + 1) * fragments);
      assertThat(s.creditViolations()).as("the rogue kept to its credits").isZero();
    }
    long offered = n * fragments * RoguePeer.BUFFER;
    assertThat(after - before).as("retained heap growth, where keeping the %d messages offered would cost %d MiB",
        n, offered / MiB).isLessThan(4 * MiB);
    StepVerifier.create(victim.get().onDispose()).expectComplete().verify(WAIT);
    RdmaConnection good = connect(client(server));
    StepVerifier.create(good.outbound().sendString(Mono.just("fine")).then()).expectComplete().verify(WAIT);
  }

  /**
   * Rogues connect one after another to one server, each sends messages within its credits, then
   * breaks a rule (in turn: grants beyond its buffers, reserved header bits, a credit update with
   * a payload, a message above the maximum, or the first fragments of a message and then goodbye),
   * until {@link #fixture().rogueMessages()} messages went in all. Each rule break fails that connection
   * with a ProtocolViolationException, the one that stops mid-message just ends; the retained
   * heap after all of them is what it was after a tenth of them (nothing per connection stays),
   * verbs objects return to their baseline (checked after each test), and a good client is served.
   */
  @Test
  void roguesBreakingTheProtocolConnectionAfterConnectionLeaveNothingBehind() {
    int maxMessage = 4 * RoguePeer.BUFFER;
    int perConnection = 100;
    long n = fixture().rogueMessages();
    long rogues = Math.max(10, n / (perConnection + 1));
    java.util.concurrent.BlockingQueue<Object> ends = new java.util.concurrent.LinkedBlockingQueue<>();
    DisposableRdmaServer server = bind(server().option(RdmaOption.MAX_MESSAGE_SIZE, maxMessage)
        .option(RdmaOption.BUFFER_COUNT, 8)
        .handle((in, out) -> in.receive().doOnNext(RdmaMessage::release).then()
            .doOnSuccess(v -> ends.add("completed")).doOnError(ends::add).onErrorResume(e -> Mono.empty())));
    InetSocketAddress address = new InetSocketAddress(fixture().host(), server.port());
    long messages = 0;
    long tenth = 0;
    int violations = 0;
    int midMessage = 0;
    for (long r = 0; r < rogues; r++) {
      if (r == rogues / 10) {
        tenth = retainedHeap();
      }
      int rule = (int) (r % 5);
      try (RoguePeer rogue = RoguePeer.connect(fixture().connections(), address, 8, WAIT)) {
        assertThat(rogue.sendWithinCredits(perConnection, 1, 64, WAIT)).as("messages a reading victim let in")
            .isEqualTo(perConnection);
        messages += perConnection + 1;
        switch (rule) {
          case 0 -> assertThat(rogue.sendOnACredit(Protocol.immediate(0xFFFF, false, false), 8, WAIT)).isTrue();
          case 1 -> assertThat(rogue.sendOnACredit(1 << 30, 8, WAIT)).isTrue();
          case 2 -> assertThat(rogue.sendOnACredit(Protocol.immediate(0, false, true), 100, WAIT)).isTrue();
          // Refused at its first fragment, which declares the length: no credit comes for the rest.
          case 3 -> rogue.sendWithinCredits(1, maxMessage / RoguePeer.BUFFER + 1, RoguePeer.BUFFER, Duration.ofMillis(200));
          default -> rogue.sendFirstFragmentsWithinCredits(maxMessage / RoguePeer.BUFFER - 1, RoguePeer.BUFFER, WAIT);
        }
        if (rule < 4) {
          violations++;
          Object end = poll(ends);
          assertThat(end).as("how rogue %d (rule %d) ended: %s", r, rule, end instanceof Throwable t && t.getCause() != null ? t.getCause().getMessage() : "")
              .isInstanceOf(io.rdmareactive.rdma.ProtocolViolationException.class);
          assertThat((Throwable) end).hasMessageContaining("broke the protocol");
        }
      }
      if (rule == 4) {
        // It went away mid-message: the victim drops the pieces it holds and says so with a RESET
        // (or one for its credit update to the rogue, should that have gone first), not a clean end.
        Object end = poll(ends);
        assertThat(end).as("how rogue %d (stopped mid-message) ended", r).isInstanceOf(ConnectionException.class);
        assertReason((Throwable) end, ConnectionException.Reason.RESET);
        midMessage += ((Throwable) end).getMessage().contains("in the middle of a message") ? 1 : 0;
      }
    }
    long all = retainedHeap();
    long perRogue = 3L * RoguePeer.BUFFER; // the pieces each fifth rogue left in its reassembly, at least
    System.out.printf("%s: %d rogues, %d messages, %d rule breaks, %d of %d stopped mid-message seen as such: retained"
        + " heap after a tenth %d KiB, after all %d KiB (%+d KiB)%n", fixture().provider(), rogues, messages, violations,
        midMessage, rogues - violations, tenth / 1024, all / 1024, (all - tenth) / 1024);
    assertThat(midMessage).as("rogues whose victim said it lost a message in the middle").isPositive();
    assertThat(messages).isGreaterThanOrEqualTo(Math.min(n, rogues * (perConnection + 1)));
    assertThat(all - tenth).as("retained heap growth over %d rogues, where keeping each stopped one's reassembly"
        + " alone would cost %d KiB", rogues - rogues / 10, (rogues - rogues / 10) / 5 * perRogue / 1024)
        .isLessThan(2 * MiB);
    RdmaConnection good = connect(client(server));
    StepVerifier.create(good.outbound().sendString(Mono.just("fine")).then()).expectComplete().verify(WAIT);
  }
}
