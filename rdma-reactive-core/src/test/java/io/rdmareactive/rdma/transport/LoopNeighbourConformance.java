package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/**
 * Neighbours on one loop (issue 21): a server on a single loop, so that every connection it serves
 * shares that loop's receive queue and buffer pools (with SHARED_RECEIVE_QUEUE; its own queue
 * without), one rogue and one good client. Whatever the rogue does, the good client's echoes all
 * arrive, whole and in order: counted, never timed.
 */
@Tag("loop-neighbours") // so that a slow target (rxe under TCG) can run this suite alone
public abstract class LoopNeighbourConformance extends TransportSuite {
  private static final int ECHOES = 200;

  /** An echo server on one loop of its own; {@code rogue} misbehaves once it is up; then the good client echoes. */
  private void neighbours(BiConsumer<DisposableRdmaServer, List<RdmaConnection>> rogue) {
    RdmaLoopResources loops = RdmaLoopResources.create("conf-neighbour", 1);
    List<RdmaConnection> served = new CopyOnWriteArrayList<>();
    // Every connection on the loop's pools (none of its own), so that the neighbours share them.
    DisposableRdmaServer server = bind(server().runOn(loops).option(RdmaOption.LOOP_PRIVATE_CONNECTIONS, 0)
        .doOnConnection(served::add).handle((in, out) -> out.send(in.receive())));
    try {
      rogue.accept(server, served);
      RdmaConnection good = connect(client(server));
      List<String> sent = Flux.range(0, ECHOES).map(i -> "echo-" + i).collectList().block(WAIT);
      StepVerifier.create(good.outbound().sendString(Flux.fromIterable(sent)).then()
              .and(good.inbound().receiveString().take(ECHOES).collectList()
                  .doOnNext(got -> assertThat(got).as("the good client's echoes, in order").isEqualTo(sent))))
          .expectComplete()
          .verify(WAIT);
      assertThat(good.statistics().creditViolations()).isZero();
      assertThat(good.statistics().messagesReceived()).isEqualTo(ECHOES);
      // Every connection the server serves is on its one loop: one receive queue for them all.
      assertThat(loops.sharedReceiveQueueCount()).as("the server loop's shared receive queues")
          .isEqualTo(SHARED_RECEIVE_QUEUE ? 1 : 0);
      if (SHARED_RECEIVE_QUEUE) {
        // Its depth: one receive per connection it serves and the headroom, plus the grants lent.
        assertThat(loops.receiveQueueDepth()).as("receives posted on the loop's SRQ")
            .isGreaterThanOrEqualTo(served.size());
      }
      System.out.printf("neighbours (%s, shared receive queue %s): %d served connections on one loop; live verbs"
          + " objects of the process (both sides) %s%n", fixture().provider(), SHARED_RECEIVE_QUEUE, served.size(),
          fixture().liveResources());
    } finally {
      for (RdmaConnection c : clients) {
        c.dispose();
        c.onDispose().block(WAIT);
      }
      clients.clear();
      server.disposeNow(WAIT);
      servers.remove(server);
      StepVerifier.create(loops.disposeLater()).expectComplete().verify(WAIT);
    }
    assertThat(loops.sharedReceiveQueueCount()).as("the loop's receive queues after every connection closed").isZero();
  }

  /**
   * Many peers of one loop spending their reserve grants at once. With SHARED_RECEIVE_QUEUE the
   * loop posts one of each connection's three reserve grants (and a headroom of 3 here, one
   * connection's {@code BUFFER_COUNT} 1 plus the reserve): the SENDs that find the queue empty
   * are retried after an RNR NAK while the loop reposts, so nothing is lost, reordered or failed.
   */
  @Test
  void manyPeersSpendingTheirReserveAtOnceLoseNothing() {
    int peers = 40;
    int messages = 40;
    RdmaLoopResources loops = RdmaLoopResources.create("conf-burst", 1);
    DisposableRdmaServer server = bind(server().runOn(loops).option(RdmaOption.BUFFER_COUNT, 1)
        .option(RdmaOption.LOOP_PRIVATE_CONNECTIONS, 0).handle((in, out) -> out.send(in.receive())));
    List<RdmaConnection> all = new CopyOnWriteArrayList<>();
    try {
      Flux.range(0, peers).flatMap(i -> client(server).option(RdmaOption.BUFFER_COUNT, 1).connect(), 8)
          .doOnNext(all::add).then().block(WAIT);
      List<String> sent = Flux.range(0, messages).map(i -> "burst-" + i).collectList().block(WAIT);
      StepVerifier.create(Flux.fromIterable(all).flatMap(c -> c.outbound().sendString(Flux.fromIterable(sent)).then()
              .and(c.inbound().receiveString().take(messages).collectList()
                  .doOnNext(got -> assertThat(got).as("a peer's echoes, in order").isEqualTo(sent))), peers)
              .then())
          .expectComplete()
          .verify(WAIT.multipliedBy(2));
      for (RdmaConnection c : all) {
        assertThat(c.statistics().receiverNotReady()).as("no SEND ran out of RNR retries").isZero();
        assertThat(c.statistics().creditViolations()).isZero();
      }
      System.out.printf("burst (%s, shared receive queue %s): %d peers x %d messages echoed on one loop%n",
          fixture().provider(), SHARED_RECEIVE_QUEUE, peers, messages);
    } finally {
      all.forEach(RdmaConnection::dispose);
      Flux.fromIterable(all).flatMap(RdmaConnection::onDispose).then().block(WAIT);
      server.disposeNow(WAIT);
      servers.remove(server);
      StepVerifier.create(loops.disposeLater()).expectComplete().verify(WAIT);
    }
  }

  @Test
  void aPeerSendingBeyondItsGrantsCostsItsNeighbourOnTheLoopNothing() {
    neighbours((server, served) -> {
      try (RoguePeer rogue = RoguePeer.connect(fixture().connections(), new InetSocketAddress(fixture().host(),
          server.port()), 8, WAIT)) {
        try {
          for (int i = 0; i < 8; i++) { // the reserve, then beyond it: failed, or "receiver not ready" at its own cost
            rogue.send(Protocol.immediate(0, false, false), 16);
          }
        } catch (RuntimeException stopped) {
          // its QP went to the error state: that is the rogue's cost, and the point
        }
        // Its connection on the server ends (typed, or by the rogue's QP failing) before it goes.
        // (The server may see the connection established after the rogue does: wait for it.)
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (served.isEmpty() && System.nanoTime() < deadline) {
          java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
        assertThat(served).as("the rogue's connection on the server").isNotEmpty();
        StepVerifier.create(served.get(0).onDispose()).expectComplete().verify(WAIT);
      }
    });
  }

  @Test
  void aPeerHoldingEveryMessageWithoutDemandCostsItsNeighbourNothing() {
    List<Disposable> sending = new CopyOnWriteArrayList<>();
    neighbours((server, served) -> {
      // It sends and never reads: the server's echoes to it stall on its credits, and what the
      // server holds for it counts against its own share.
      RdmaConnection hog = connect(client(server));
      sending.add(hog.outbound().sendString(Flux.range(0, 10_000).map(i -> "hog-" + i)).subscribe(null, e -> { }));
    });
    sending.forEach(Disposable::dispose);
  }

  @Test
  void aPeerSendingAtFullCreditCostsItsNeighbourNothing() {
    List<Disposable> streaming = new CopyOnWriteArrayList<>();
    neighbours((server, served) -> {
      RdmaConnection busy = connect(client(server).option(RdmaOption.BUFFER_SIZE, 4096));
      streaming.add(busy.inbound().receive().doOnNext(RdmaMessage::release).subscribe(null, e -> { }));
      streaming.add(busy.outbound().send(Flux.range(0, 100_000).map(i -> new byte[1024]))
          .subscribe(null, e -> { }));
    });
    streaming.forEach(Disposable::dispose);
  }
}
