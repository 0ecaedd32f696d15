package io.rdmareactive.rdma.rdmacore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.transport.DisposableRdmaServer;
import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaServer;
import java.time.Duration;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import reactor.core.publisher.Mono;

/**
 * What the other host's failures look like (scripts/softroce-vm-pair, guest a serves, guest b
 * connects): a partition longer than the retry budget fails both ends with a typed RESET within
 * the derived bound ({@link CrossHostBounds}); a host that vanishes while its connection is idle is
 * found by the keepalive within its bound; a server refuses a port nobody listens on, and one past
 * MAX_CONNECTIONS, to the other host. Both guests run this class at once.
 */
@Tag("cross-host")
@TestMethodOrder(MethodOrderer.MethodName.class)
class CrossHostFailureTest extends AbstractCrossHostTest {
  private static final int PORT = 7610;
  private static final int RETRY_COUNT = 3;
  private static final Duration KEEPALIVE = Duration.ofSeconds(1);
  private static final Duration WAIT = CrossHostEnds.WAIT;

  @Test
  void a_aLongPartitionFailsBothEndsTyped() throws Exception {
    CrossHostStream stream = new CrossHostStream();
    try (CrossHostEnds side = stream.open(pair, PORT, RETRY_COUNT, KEEPALIVE)) {
      stream.awaitFlowing();
      pair.barrier("flowing");
      long start = System.nanoTime();
      pair.partition();
      Duration bound = CrossHostBounds.keepalive(KEEPALIVE, RETRY_COUNT);
      Throwable failure = stream.awaitFailure(bound.plus(CrossHostBounds.SLACK).plus(WAIT));
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      pair.figure("long partition noticed after " + took.toMillis() + " ms; bound 2 x KEEPALIVE_INTERVAL + (RETRY_COUNT + 1)"
          + " x ACK timeout = " + bound.toMillis() + " ms (R " + RETRY_COUNT + ", K " + KEEPALIVE.toMillis()
          + " ms, T " + CrossHostBounds.ACK_TIMEOUT.toMillis() + " ms): " + failure);
      assertReset(failure);
      assertThat(took).as("noticed within the bound (+ %s under TCG)", CrossHostBounds.SLACK)
          .isLessThanOrEqualTo(bound.plus(CrossHostBounds.SLACK));
      // Sends were in flight, and the keepalive watches them too: a send that makes no progress
      // for an interval fails the connection, so the keepalive usually wins over the retries.
      // Never before one interval, though: a partition shorter than that heals unnoticed.
      assertThat(took).as("no sooner than one keepalive interval").isGreaterThanOrEqualTo(KEEPALIVE);
      pair.barrier("both-failed");
      side.heal();
    }
  }

  @Test
  void b_aHostVanishingWhileIdleIsFoundByTheKeepalive() throws Exception {
    CrossHostStream stream = new CrossHostStream();
    // Only guest a keeps alive: guest b goes silent (its egress drops everything) and never sends.
    try (CrossHostEnds side = stream.openIdle(pair, PORT + 1, RETRY_COUNT, KEEPALIVE)) {
      pair.barrier("idle");
      if (pair.isA()) {
        long start = System.nanoTime();
        Duration bound = CrossHostBounds.keepalive(KEEPALIVE, RETRY_COUNT);
        Throwable failure = stream.awaitFailure(bound.plus(CrossHostBounds.SLACK).plus(WAIT));
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        pair.figure("idle peer's host vanished: keepalive noticed after " + took.toMillis() + " ms; bound "
            + bound.toMillis() + " ms: " + failure);
        assertReset(failure);
        assertThat(failure).hasMessageContaining("keepalive");
        assertThat(took).as("noticed within the bound (+ %s under TCG)", CrossHostBounds.SLACK)
            .isLessThanOrEqualTo(bound.plus(CrossHostBounds.SLACK));
        pair.barrier("noticed");
      } else {
        pair.partition();
        pair.barrier("noticed");
      }
      side.heal();
    }
  }

  @Test
  void c_aPortNobodyListensOnIsRefusedToTheOtherHost() {
    pair.barrier("ready");
    if (!pair.isA()) {
      assertThatThrownBy(() -> client(PORT + 2).connectNow(WAIT))
          .isInstanceOfSatisfying(ConnectionException.class,
              e -> assertThat(e.reason()).as("%s", e).isEqualTo(ConnectionException.Reason.REFUSED));
    }
    pair.barrier("done");
  }

  @Test
  void d_aServerLimitsConnectionsFromTheOtherHost() {
    DisposableRdmaServer server = null;
    if (pair.isA()) {
      server = RdmaServer.create().host(pair.self()).port(PORT + 3).option(RdmaOption.PROVIDER, NativeProvider.NAME)
          .option(RdmaOption.MAX_CONNECTIONS, 1).handle((in, out) -> out.send(in.receive())).bindNow(WAIT);
    }
    pair.barrier("listening");
    if (!pair.isA()) {
      RdmaConnection first = client(PORT + 3).connectNow(WAIT);
      try {
        assertThat(first.outbound().send(Mono.just(new byte[] {42})).then(first.inbound().receiveBytes().next())
            .block(WAIT)).containsExactly(42);
        assertThatThrownBy(() -> client(PORT + 3).connectNow(WAIT))
            .isInstanceOfSatisfying(ConnectionException.class, e -> {
              assertThat(e.reason()).as("%s", e).isEqualTo(ConnectionException.Reason.REFUSED);
              assertThat(e).hasMessageContaining("MAX_CONNECTIONS");
            });
      } finally {
        first.dispose();
        first.onDispose().block(WAIT);
      }
    }
    pair.barrier("done");
    if (server != null) {
      server.disposeNow(WAIT);
    }
  }

  private RdmaClient client(int port) {
    return RdmaClient.create().host(pair.peer()).port(port).option(RdmaOption.PROVIDER, NativeProvider.NAME)
        .connectTimeout(WAIT);
  }

  /** A RESET naming the transport's retries (RETRY_EXC_ERR) or the keepalive. */
  static void assertReset(Throwable failure) {
    assertThat(failure).isInstanceOfSatisfying(ConnectionException.class,
        e -> assertThat(e.reason()).as("%s", e).isEqualTo(ConnectionException.Reason.RESET));
    StringBuilder chain = new StringBuilder();
    for (Throwable t = failure; t != null; t = t.getCause()) {
      chain.append(t).append(" <- ");
    }
    assertThat(chain.toString()).as("names the retries or the keepalive").containsAnyOf("RETRY_EXC_ERR", "keepalive");
  }
}
