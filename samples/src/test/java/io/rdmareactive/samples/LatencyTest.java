package io.rdmareactive.samples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.transport.DisposableRdmaServer;
import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaOption;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The latency tool's options, statistics and ping-pong, on the in-memory provider. */
class LatencyTest {
  @Test
  void parsesPerftestLikeOptions() {
    Latency.Options o = Latency.Options.parse(new String[] {"-s", "64", "-n", "500", "--warmup", "10", "-p", "9999",
        "-B", "--provider", "in-memory", "10.0.0.1"});
    assertThat(o).isEqualTo(new Latency.Options(64, 500, 10, 9999, "10.0.0.1", true, "in-memory", false, "10.0.0.1"));
    Latency.Options d = Latency.Options.parse(new String[0]);
    assertThat(d.size()).isEqualTo(2);
    assertThat(d.iterations()).isEqualTo(1000);
    assertThat(d.port()).isEqualTo(18515);
    assertThat(d.host()).isNull();
    assertThat(d.server()).isFalse();
  }

  @Test
  void rejectsBadOptionsNamingThem() {
    assertThatThrownBy(() -> Latency.Options.parse(new String[] {"-s", "0"})).hasMessage("-s must be >= 1, was 0");
    assertThatThrownBy(() -> Latency.Options.parse(new String[] {"--frobnicate"}))
        .hasMessageContaining("unknown option '--frobnicate'");
    assertThatThrownBy(() -> Latency.Options.parse(new String[] {"-n"})).hasMessage("-n needs a value");
    assertThatThrownBy(() -> Latency.Options.parse(new String[] {"--server", "10.0.0.1"}))
        .hasMessageContaining("--server takes no HOST");
    assertThatThrownBy(() -> Latency.Options.parse(new String[] {"-p", "70000"}))
        .hasMessageContaining("port must be 0 .. 65535");
  }

  @Test
  void percentilesAndResultLine() {
    long[] sorted = new long[1000];
    for (int i = 0; i < sorted.length; i++) {
      sorted[i] = (i + 1) * 1000L; // 1 .. 1000 usec
    }
    assertThat(Latency.percentile(sorted, 0.50)).isEqualTo(500_000);
    assertThat(Latency.percentile(sorted, 0.99)).isEqualTo(990_000);
    assertThat(Latency.percentile(sorted, 0.999)).isEqualTo(999_000);
    String[] lines = Latency.format(8, sorted).split("\\R");
    assertThat(lines[0].trim().split("\\s+")).startsWith("#bytes", "#iterations", "p50[usec]", "p99[usec]",
        "p99.9[usec]");
    assertThat(lines[1].trim().split("\\s+")).containsExactly("8", "1000", "500.00", "990.00", "999.00", "1.00",
        "1000.00", "500.50");
  }

  @Test
  void pingPongMeasuresEveryIteration() throws InterruptedException {
    DisposableRdmaServer server = EchoServer.start("127.0.0.1", 0, "in-memory");
    try {
      RdmaConnection c = RdmaClient.create().host("127.0.0.1").port(server.port())
          .option(RdmaOption.PROVIDER, "in-memory").connectNow(Duration.ofSeconds(10));
      try {
        long[] samples = Latency.run(c, 32, 20, 200);
        assertThat(samples).hasSize(200).isSorted();
        assertThat(samples[0]).isPositive();
        assertThat(c.statistics().messagesReceived()).isEqualTo(220);
      } finally {
        c.dispose();
        c.onDispose().block(Duration.ofSeconds(10));
      }
    } finally {
      server.disposeNow(Duration.ofSeconds(10));
    }
  }
}
