package io.rdmareactive.rdma.rdmacore;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Framed messaging between two hosts (scripts/softroce-vm-pair: guest a serves on 10.0.0.1, guest b
 * connects from 10.0.0.2) while the wire misbehaves: 10^4 numbered messages each way, each
 * delivered exactly once, in order and byte for byte, under loss, delay with jitter, reordering,
 * and a partition shorter than the retry budget. Each guest sets the fault on its own egress, so
 * both directions suffer it. Both guests run this class at once.
 */
@Tag("cross-host")
@TestMethodOrder(MethodOrderer.MethodName.class)
class CrossHostMessagingTest extends AbstractCrossHostTest {
  static final int PORT = 7600;
  static final int MESSAGES = 10_000;
  /** 10^4 messages of up to 3 KB each way, with loss, under TCG on a shared host. */
  private static final Duration DONE = Duration.ofMinutes(6);

  @Test
  void a_noFault() throws Exception {
    // The first exchange of the JVM also JIT-compiles its path: unmeasured, so that this figure,
    // the baseline of the others, measures the wire.
    exchange(PORT + 5, MESSAGES / 5);
    Duration took = exchange(PORT, MESSAGES);
    pair.figure("no fault: " + MESSAGES + " each way in " + took.toMillis() + " ms, "
        + rate(took) + " messages/s each way");
  }

  @Test
  void b_onePercentLoss() throws Exception {
    pair.netem("loss", "1%");
    Duration took = exchange(PORT + 1);
    pair.figure("1% loss: " + MESSAGES + " each way in " + took.toMillis() + " ms, "
        + rate(took) + " messages/s each way; lost 0, duplicates 0");
  }

  @Test
  void c_delayWithJitter() throws Exception {
    pair.delayInOrder("5ms", "1ms");
    Duration took = exchange(PORT + 2);
    pair.figure("5 ms +- 1 ms delay: " + MESSAGES + " each way in " + took.toMillis() + " ms");
  }

  @Test
  void d_reordering() throws Exception {
    // A tenth of the packets go at once, the rest 2 ms later: packets overtake each other, and RC
    // answers each with a NAK and a go-back-N retransmission (costly: a quarter took 2.5x as long).
    pair.netem("delay", "2ms", "reorder", "10%", "50%");
    Duration took = exchange(PORT + 3);
    pair.figure("reordering (10% overtake the rest by 2 ms): " + MESSAGES + " each way in " + took.toMillis() + " ms");
  }

  @Test
  void e_aShortPartitionHeals() throws Exception {
    // Shorter than the retry budget ((RETRY_COUNT + 1) ACK timeouts, ~3.8 s): RC retransmits
    // what was lost once the wire is back, and the connection carries on.
    Duration partition = Duration.ofMillis(1500);
    CrossHostExchange x = new CrossHostExchange(MESSAGES);
    try (CrossHostEnds ends = open(PORT + 4, x)) {
      awaitAtLeast(x, MESSAGES / 10);
      pair.barrier("flowing");
      pair.partition();
      long at = x.received();
      Thread.sleep(partition.toMillis());
      pair.heal();
      x.awaitDone(DONE);
      pair.figure("partition of " + partition.toMillis() + " ms at message " + at + " healed: all " + MESSAGES
          + " in, in order");
      ends.heal();
    }
  }

  private Duration exchange(int port) throws Exception {
    return exchange(port, MESSAGES);
  }

  private Duration exchange(int port, int messages) throws Exception {
    CrossHostExchange x = new CrossHostExchange(messages);
    try (CrossHostEnds ends = open(port, x)) {
      x.awaitDone(DONE);
      ends.heal();
    }
    return x.elapsed();
  }

  private CrossHostEnds open(int port, CrossHostExchange x) {
    return CrossHostEnds.open(pair, port, s -> s, c -> c, x::run);
  }

  private static long rate(Duration took) {
    return MESSAGES * 1000L / Math.max(1, took.toMillis());
  }

  static void awaitAtLeast(CrossHostExchange x, long n) {
    long deadline = System.nanoTime() + DONE.toNanos();
    while (x.received() < n) {
      assertThat(System.nanoTime() - deadline).as("%d messages in (got %d)", n, x.received()).isNegative();
      LockSupport.parkNanos(10_000_000);
    }
  }
}
