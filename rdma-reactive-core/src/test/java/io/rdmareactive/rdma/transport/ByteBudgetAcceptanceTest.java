package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.device.RdmaDevices;
import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import io.rdmareactive.rdma.spi.ConnectionProvider;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * Issue 24, finding 1, in memory: a server with default options in a JVM of {@code -Xmx512m}
 * (forked, so that the bound is the one the issue names) on a single loop. First a peer sends 40
 * messages of 16 MiB at a handler that never requests; then 40 rogues each declare a 16 MiB
 * message, send all of it but its last fragment and stay connected for 60 s. Throughout, the
 * retained heap stays under 64 MiB with no OutOfMemoryError, and a good connection on the same
 * loop echoes.
 */
class ByteBudgetAcceptanceTest {
  private static final int MiB = 1 << 20;
  private static final Duration WAIT = Duration.ofSeconds(30);
  /** How long the rogues stay connected (the 60 s; RDMA_BUDGET_HOLD_SECONDS overrides). */
  private static final int HOLD_SECONDS = Integer.parseInt(System.getenv().getOrDefault("RDMA_BUDGET_HOLD_SECONDS", "60"));

  @Test
  void peersSendingHugeMessagesNeverTakeTheHeapOfA512MiBServerAndItsLoopKeepsServing() throws Exception {
    Path out = Files.createTempFile("byte-budget", ".log");
    try {
      String java = ProcessHandle.current().info().command().orElse("java");
      Process p = new ProcessBuilder(java, "-Xmx512m", "-XX:+ExitOnOutOfMemoryError",
          "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
          ByteBudgetAcceptanceTest.class.getName())
          .redirectErrorStream(true).redirectOutput(out.toFile()).start();
      boolean ended = p.waitFor(HOLD_SECONDS + 240L, TimeUnit.SECONDS);
      if (!ended) {
        p.destroyForcibly();
      }
      String log = Files.readString(out, StandardCharsets.UTF_8);
      System.out.println(log.lines().filter(l -> l.startsWith("budget:")).reduce("", (a, b) -> a + b + "\n"));
      assertThat(ended).as("the forked server finished; its output:%n%s", log).isTrue();
      assertThat(log).doesNotContain("OutOfMemoryError");
      assertThat(p.exitValue()).as("the forked server's exit status; its output:%n%s", log).isZero();
      assertThat(log).contains("budget: PASS");
    } finally {
      Files.deleteIfExists(out);
    }
  }

  /** The forked server: prints "budget: ..." lines, "budget: PASS" at the end, and exits non-zero on a failed check. */
  public static void main(String[] args) throws Exception {
    RdmaLoopResources loops = RdmaLoopResources.create("budget", 1);
    AtomicInteger accepted = new AtomicInteger();
    DisposableRdmaServer server = RdmaServer.create().host("127.0.0.1").port(0)
        .option(RdmaOption.PROVIDER, InMemoryProvider.NAME).runOn(loops)
        .handle((in, outbound) -> {
          if (accepted.getAndIncrement() == 0) {
            return outbound.send(in.receive()); // the good connection: echoes
          }
          in.receive().subscribe(new reactor.core.publisher.BaseSubscriber<RdmaMessage>() {
            @Override
            protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
              // and never requests
            }
          });
          return Mono.never();
        })
        .bindNow();
    RdmaClient client = RdmaClient.create().host("127.0.0.1").port(server.port())
        .option(RdmaOption.PROVIDER, InMemoryProvider.NAME).runOn(loops);
    RdmaConnection good = client.connectNow();
    good.inbound().receiveString().subscribe(echoes::add);
    echo(good, "before");
    long base = retainedHeap();
    System.out.printf("budget: baseline retained heap %d MiB%n", base / MiB);
    long worst = 0;

    // 1. 40 messages of 16 MiB at a handler that never requests, from a peer that keeps to its
    // credits to the letter (the last one too, which the transport's own sender keeps back).
    ConnectionProvider cp = RdmaDevices.provider(InMemoryProvider.NAME).connections();
    InetSocketAddress address = new InetSocketAddress("127.0.0.1", server.port());
    int fragments = 16 * MiB / RoguePeer.BUFFER;
    long sent;
    try (RoguePeer flood = RoguePeer.connect(cp, address, 8, WAIT)) {
      sent = flood.sendWithinCredits(40, fragments, RoguePeer.BUFFER, Duration.ofSeconds(3));
      echo(good, "while the 16 MiB messages wait");
      long retained = retainedHeap() - base;
      worst = Math.max(worst, retained);
      System.out.printf("budget: 40 x 16 MiB at a handler that never requests: %d of %d fragments let in (%.1f"
          + " messages), then stopped; retained heap +%d MiB%n", sent, 40L * fragments, sent / (double) fragments,
          retained / MiB);
    }
    check(sent < 40L * fragments, "the flooding peer was stopped");

    // 2. 40 rogues that each stop one fragment short of 16 MiB and stay connected.
    List<RoguePeer> rogues = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    List<Future<Long>> sends = new ArrayList<>();
    for (int r = 0; r < 40; r++) {
      RoguePeer rogue = RoguePeer.connect(cp, address, 8, WAIT);
      rogues.add(rogue);
      sends.add(pool.submit(() -> rogue.sendFirstFragmentsWithinCredits(fragments - 1,
          RoguePeer.BUFFER, Duration.ofSeconds(3))));
    }
    long let = 0;
    for (Future<Long> f : sends) {
      let += f.get(240, TimeUnit.SECONDS);
    }
    pool.shutdown();
    System.out.printf("budget: 40 rogues stopping one fragment short of 16 MiB: %d of their %d fragments let in%n",
        let, 40L * (fragments - 1));
    check(let >= 3L * (fragments - 1), "the server's whole total (3 x 16 MiB) went to rogues once the flood's"
        + " connection closed: a closed connection gives its reservations back");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(HOLD_SECONDS);
    while (System.nanoTime() < deadline) {
      echo(good, "while the rogues hold");
      long retained = retainedHeap() - base;
      worst = Math.max(worst, retained);
      Thread.sleep(5000);
    }
    System.out.printf("budget: rogues connected for %d s; retained heap +%d MiB%n", HOLD_SECONDS,
        (retainedHeap() - base) / MiB);
    for (RoguePeer r : rogues) {
      r.close();
    }
    echo(good, "after");
    System.out.printf("budget: worst retained heap +%d MiB%n", worst / MiB);
    check(worst < 64L * MiB, "retained heap under 64 MiB");
    good.dispose();
    server.disposeNow(WAIT);
    loops.disposeLater().block(WAIT);
    System.out.println("budget: PASS");
    System.exit(0);
  }

  private static final java.util.concurrent.BlockingQueue<String> echoes = new java.util.concurrent.LinkedBlockingQueue<>();

  private static void echo(RdmaConnection good, String when) throws InterruptedException {
    good.outbound().sendString(Mono.just("ping")).block(WAIT);
    check("ping".equals(echoes.poll(WAIT.toSeconds(), TimeUnit.SECONDS)), "the good connection echoes " + when);
  }

  private static void check(boolean ok, String what) {
    if (!ok) {
      System.out.println("budget: FAILED: " + what);
      System.exit(1);
    }
  }

  private static long retainedHeap() {
    java.lang.management.MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    long least = Long.MAX_VALUE;
    for (int i = 0; i < 3; i++) {
      System.gc();
      least = Math.min(least, memory.getHeapMemoryUsage().getUsed());
    }
    return least;
  }
}
