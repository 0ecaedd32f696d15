package io.rdmareactive.rdma.rdmacore;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.conformance.LeakCheck;
import io.rdmareactive.rdma.transport.DisposableRdmaServer;
import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaServer;
import io.rdmareactive.rdma.transport.RdmaStatistics;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * Flow control seen from the device: a consumer at one message per millisecond, a few buffers, and
 * the device's own RNR counters ({@code rdma statistic show link <dev>/1}: receiver-not-ready NAKs
 * sent and received, RNR retries exhausted) do not move, because the sender waits for credits
 * instead of sending into missing receives. As a control, raw mode (no credits) with a slower
 * consumer does make the device count RNR NAKs, so the counters are not blind. Soft-RoCE VM only:
 * the counters are the whole device's, so nothing else may use it meanwhile.
 */
@Tag("native")
class NativeSlowConsumerStatisticsTest {
  @RegisterExtension
  final LeakCheck leakCheck = NativeTestSupport.settlingLeakCheck();

  private static final String HOST = NativeConnectionProviderTest.HOST;
  private static final Duration WAIT = Duration.ofSeconds(60);
  /** rxe's receiver-not-ready counters. */
  private static final List<String> RNR = List.of("rcvd_rnr_err", "send_rnr_err", "retry_rnr_exceeded_err");
  private static final Pattern COUNTER = Pattern.compile("\\b([a-z_]+) (\\d+)");
  private static final int MESSAGES = 300;
  private static final int BUFFER_COUNT = 4;

  @BeforeAll
  static void warmUp() {
    NativeTestSupport.deviceName(); // skips, saying why, where there is no device
    NativeConnectionProviderTest.openCmDeviceContext();
  }

  @Test
  void creditsKeepTheDevicesRnrCountersStillAndTheHeapFlat() {
    // A first run warms up the JIT and the buffers so that the heap comparison sees steady state.
    run(false, MESSAGES, Duration.ofMillis(1));
    long heapBefore = usedHeapAfterGc();
    Map<String, Long> counters = counters();
    System.out.println("device counters before: " + counters);
    assertThat(counters).as("rxe counts receiver-not-ready NAKs").containsKeys(RNR.toArray(String[]::new));

    Result r = run(false, MESSAGES, Duration.ofMillis(1));

    Map<String, Long> after = counters();
    System.out.println("device counters after:  " + after);
    System.out.println("sender: " + r.sender() + "\nreceiver: " + r.receiver());
    for (String name : RNR) {
      assertThat(after.get(name)).as("device counter %s", name).isEqualTo(counters.get(name));
    }
    RdmaStatistics sender = r.sender();
    // Messages coalesce (five 8-byte ones to a 64-byte SEND): the device carries the SENDs.
    assertThat(after.get("rcvd_pkts") - counters.get("rcvd_pkts")).as("the device saw the traffic")
        .isGreaterThanOrEqualTo(sender.dataSends());
    assertThat(sender.dataSends()).as("SENDs for %d messages", MESSAGES).isLessThan(MESSAGES);
    assertThat(sender.messagesSent()).isEqualTo(MESSAGES);
    assertThat(sender.creditStalls()).as("a slow consumer makes the sender wait for credits").isPositive();
    assertThat(sender.maxSendsInFlight()).as("sends in flight, at most").isLessThanOrEqualTo(BUFFER_COUNT + 2);
    assertThat(sender.receiverNotReady() + r.receiver().receiverNotReady()).isZero();
    assertThat(sender.creditViolations()).isZero();
    assertThat(sender.completionErrors() + r.receiver().completionErrors()).isZero();
    long heapAfter = usedHeapAfterGc();
    System.out.printf("used heap after GC: %d KiB before, %d KiB after%n", heapBefore >> 10, heapAfter >> 10);
    assertThat(heapAfter - heapBefore).as("heap growth in bytes over a run").isLessThan(8L << 20);
  }

  @Test
  void withoutCreditsTheDeviceCountsRnrNaks() {
    Map<String, Long> counters = counters();
    // Slower still, so that even a fast sender outruns it once the buffers are full.
    Result r = run(true, 60, Duration.ofMillis(20));
    Map<String, Long> after = counters();
    System.out.println("raw mode, device counters before: " + counters + "\nafter: " + after);
    assertThat(after.get("rcvd_rnr_err") - counters.get("rcvd_rnr_err"))
        .as("RNR NAKs the sender got from the slow raw receiver (sender: %s)", r.sender()).isPositive();
    assertThat(after.get("retry_rnr_exceeded_err")).as("rnr_retry 7 retries forever")
        .isEqualTo(counters.get("retry_rnr_exceeded_err"));
  }

  private record Result(RdmaStatistics sender, RdmaStatistics receiver) {}

  /** Sends {@code n} numbered messages to a consumer that takes one per {@code pace}. */
  private static Result run(boolean raw, int n, Duration pace) {
    AtomicInteger consumed = new AtomicInteger();
    AtomicReference<RdmaConnection> serverSide = new AtomicReference<>();
    DisposableRdmaServer server = RdmaServer.create().host(HOST).port(0).option(RdmaOption.PROVIDER, NativeProvider.NAME)
        .option(RdmaOption.RAW, raw).option(RdmaOption.BUFFER_COUNT, BUFFER_COUNT).option(RdmaOption.BUFFER_SIZE, 64)
        .doOnConnection(serverSide::set)
        .handle((in, out) -> in.receiveBytes()
            .delayElements(pace)
            .doOnNext(b -> consumed.incrementAndGet())
            .then())
        .bindNow();
    try {
      RdmaConnection c = RdmaClient.create().host(HOST).port(server.port()).option(RdmaOption.PROVIDER, NativeProvider.NAME)
          .option(RdmaOption.RAW, raw).option(RdmaOption.BUFFER_COUNT, BUFFER_COUNT).option(RdmaOption.BUFFER_SIZE, 64)
          .connectTimeout(Duration.ofSeconds(10)).connectNow();
      try {
        StepVerifier.create(c.outbound().send(Flux.range(0, n).map(i -> ByteBuffer.allocate(8).putLong(i).array())))
            .expectComplete()
            .verify(WAIT);
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (consumed.get() < n && System.nanoTime() < deadline) {
          LockSupport.parkNanos(1_000_000);
        }
        assertThat(consumed.get()).as("consumed").isEqualTo(n);
        return new Result(c.statistics(), serverSide.get().statistics());
      } finally {
        c.dispose();
        StepVerifier.create(c.onDispose()).expectComplete().verify(WAIT);
      }
    } finally {
      server.disposeNow(WAIT);
    }
  }

  /** {@code rdma statistic show link <device>/1}, by counter name. */
  private static Map<String, Long> counters() {
    String link = NativeTestSupport.deviceName() + "/1";
    // rxe caches its counters for hw_counters/lifespan (10 ms by default): let them settle.
    LockSupport.parkNanos(50_000_000);
    try {
      Process p = new ProcessBuilder("rdma", "statistic", "show", "link", link).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).as("rdma statistic show link %s: %s", link, out).isZero();
      Map<String, Long> counters = new TreeMap<>();
      Matcher m = COUNTER.matcher(out);
      while (m.find()) {
        counters.put(m.group(1), Long.parseLong(m.group(2)));
      }
      return counters;
    } catch (IOException e) {
      throw new AssertionError("the 'rdma' tool (iproute2) is needed to read the device's counters", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  private static long usedHeapAfterGc() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }
}
