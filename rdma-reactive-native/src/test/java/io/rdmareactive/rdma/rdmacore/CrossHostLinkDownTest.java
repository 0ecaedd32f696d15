package io.rdmareactive.rdma.rdmacore;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.ConnectionException;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Guest b's end of the wire goes down mid-stream and never comes back ({@code ip link set eth0
 * down}): guest a's connection fails with a RESET naming the retries, within (RETRY_COUNT + 1) ACK
 * timeouts; guest b's fails typed too (rxe reports the port down). Its own tag, run last in the
 * pair's boot: no RC connection works on guest b after it.
 */
@Tag("cross-host-last")
class CrossHostLinkDownTest extends AbstractCrossHostTest {
  private static final int PORT = 7620;
  private static final int RETRY_COUNT = 3;

  @Test
  void aLinkThatGoesDownForGoodFailsBothEnds() throws Exception {
    CrossHostStream stream = new CrossHostStream();
    try (CrossHostEnds ends = stream.open(pair, PORT, RETRY_COUNT, Duration.ofSeconds(1))) {
      stream.awaitFlowing();
      pair.barrier("flowing");
      long start = System.nanoTime();
      if (!pair.isA()) {
        pair.linkDown();
      }
      Duration bound = CrossHostBounds.keepalive(Duration.ofSeconds(1), RETRY_COUNT);
      Throwable failure = stream.awaitFailure(bound.plus(CrossHostBounds.SLACK).plus(CrossHostEnds.WAIT));
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      pair.figure("link down for good on guest b: this end failed after " + took.toMillis() + " ms (bound "
          + bound.toMillis() + " ms): " + failure);
      assertThat(failure).isInstanceOf(ConnectionException.class);
      if (pair.isA()) {
        CrossHostFailureTest.assertReset(failure);
      }
      assertThat(took).isLessThanOrEqualTo(bound.plus(CrossHostBounds.SLACK));
      pair.barrier("both-failed");
    }
  }
}
