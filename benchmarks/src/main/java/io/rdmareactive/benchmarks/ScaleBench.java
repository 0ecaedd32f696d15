package io.rdmareactive.benchmarks;

import io.rdmareactive.rdma.transport.DisposableRdmaServer;
import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaLoopResources;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import reactor.core.publisher.Flux;

/**
 * Many connections on a few loops, both ends in this JVM: connect time, echo, close time, the
 * thread count at its peak, and the memory each idle connection pins (its registered bytes, and the
 * kernel's VmPin and VmLck where the native provider registers memory). Then the memory
 * acceptance of issue 21: every connection streams {@code messages} messages to the server, which
 * receives with unbounded demand (no {@code limitRate}) and echoes each, and the client too takes its echoes with
 * unbounded demand; once all went idle, the registered bytes of both ends in all and the JVM's
 * resident set are printed.
 *
 * <pre>ScaleBench [provider] [host] [connections] [loops] [bufferSize] [bufferCount] [messages]</pre>
 * Defaults: in-memory 127.0.0.1 1000 4 and the transport's default buffers. Run it with
 * {@code scripts/scale} (in the Soft-RoCE VM with {@code --vm}).
 */
public final class ScaleBench {
  private ScaleBench() {}

  public static void main(String[] args) throws IOException {
    String provider = arg(args, 0, "in-memory");
    String host = arg(args, 1, "127.0.0.1");
    int n = Integer.parseInt(arg(args, 2, "1000"));
    int loopCount = Integer.parseInt(arg(args, 3, "4"));
    int bufferSize = Integer.parseInt(arg(args, 4, String.valueOf(RdmaOption.BUFFER_SIZE.defaultValue())));
    int bufferCount = Integer.parseInt(arg(args, 5, String.valueOf(RdmaOption.BUFFER_COUNT.defaultValue())));
    int messages = Integer.parseInt(arg(args, 6, "64"));
    List<RdmaConnection> served = new java.util.concurrent.CopyOnWriteArrayList<>();
    RdmaLoopResources loops = RdmaLoopResources.create("scale", loopCount);
    int threadsBefore = Thread.activeCount();
    long pinnedBefore = pinnedKiB();
    DisposableRdmaServer server = RdmaServer.create().host(host).port(0).runOn(loops)
        .option(RdmaOption.PROVIDER, provider).option(RdmaOption.BUFFER_SIZE, bufferSize)
        .option(RdmaOption.BUFFER_COUNT, bufferCount).doOnConnection(served::add)
        .handle((in, out) -> out.send(in.receive())).bindNow();
    RdmaClient client = RdmaClient.create().host(host).port(server.port()).runOn(loops)
        .option(RdmaOption.PROVIDER, provider).option(RdmaOption.BUFFER_SIZE, bufferSize)
        .option(RdmaOption.BUFFER_COUNT, bufferCount).connectTimeout(Duration.ofSeconds(120));
    long rnrNaksBefore = rnrNaksSent();
    long t0 = System.nanoTime();
    List<RdmaConnection> conns = Flux.range(0, n).flatMap(i -> client.connect(), 16).collectList()
        .block(Duration.ofMinutes(30));
    long t1 = System.nanoTime();
    long pinned = pinnedKiB() - pinnedBefore;
    // Both ends' receive slabs are the loops' (shared receive queue): half of them counts for the clients.
    long idleRegistered = conns.stream().mapToLong(c -> c.statistics().registeredBytes()).sum()
        + loops.registeredReceiveBytes() / 2;
    // A ping, then the stream: unbounded demand both ways (receive() without limitRate), then idle.
    Flux.fromIterable(conns).index().flatMap(t -> t.getT2().outbound()
        .sendString(Flux.just("ping-" + t.getT1()).concatWith(Flux.range(0, messages).map(i -> "m" + i)))
        .then().and(t.getT2().inbound().receiveString().take(1 + messages).index()
            .filter(m -> m.getT1() > 0 || m.getT2().equals("ping-" + t.getT1())).count()
            .filter(got -> got == 1 + messages)
            .switchIfEmpty(reactor.core.publisher.Mono.error(new IllegalStateException("bad echo")))), 64)
        .then().block(Duration.ofMinutes(30));
    long t2 = System.nanoTime();
    int threadsPeak = Thread.activeCount();
    // Idle: the loops' pools give back what the stream's peak needed once a trim period (500 ms)
    // passes without it, then keep one base chunk; two periods and some.
    LockSupport.parkNanos(Duration.ofMillis(1500).toNanos());
    // The connections' own buffers plus the loops' shared receive slabs (SHARED_RECEIVE_QUEUE).
    long registeredIdle = registered(conns) + registered(served) + loops.registeredReceiveBytes();
    long rss = statusKiB("VmRSS:");
    System.gc();
    long heapUsed = Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory();
    String resourcesIdle = rdmaResources(provider);
    long rnrNaks = rnrNaksSent() - rnrNaksBefore;
    conns.forEach(RdmaConnection::dispose);
    Flux.fromIterable(conns).flatMap(RdmaConnection::onDispose).then().block(Duration.ofMinutes(30));
    long t3 = System.nanoTime();
    server.disposeNow(Duration.ofMinutes(5));
    loops.disposeLater().block(Duration.ofMinutes(1));
    String resourcesAfter = rdmaResources(provider);
    System.out.printf("scale: provider %s, %d connections (%d QPs), %s%n", provider, n, 2 * n, loops);
    System.out.printf("scale: connect %.1f s (%.1f s per 1,000), echo and stream %.1f s, close %.1f s (%.1f s per 1,000)%n",
        sec(t1 - t0), sec(t1 - t0) * 1000 / n, sec(t2 - t1), sec(t3 - t2), sec(t3 - t2) * 1000 / n);
    System.out.printf("scale: threads %d before, %d at peak (+%d), %d loops%n", threadsBefore, threadsPeak,
        threadsPeak - threadsBefore, loopCount);
    long perConnBytes = ((long) bufferCount + 2) * bufferSize + (long) bufferCount * bufferSize;
    System.out.printf("scale: registered per idle connection end %.1f KiB (client ends, measured; at most %d KiB "
        + "by options when busy); kernel-pinned per connection end when idle %s%n", idleRegistered / 1024.0 / n,
        perConnBytes / 1024, pinned < 0 ? "n/a" : (pinned / (2.0 * n)) + " KiB");
    System.out.printf("scale: after streaming %d messages per connection with unbounded demand, idle: registered "
        + "%.1f MiB in all (both ends, %.1f KiB per connection end), resident set %.1f MiB, heap used %.1f MiB%n",
        messages, registeredIdle / 1048576.0, registeredIdle / 1024.0 / (2.0 * n), rss / 1024.0, heapUsed / 1048576.0);
    if (resourcesIdle != null) {
      System.out.printf("scale: rdma resource, idle with %d connections: %s%n", n, resourcesIdle);
      System.out.printf("scale: rdma resource, after close and the loops' disposal: %s%n", resourcesAfter);
      System.out.printf("scale: RNR NAKs the devices sent from connect to idle (hw_counters send_rnr_err, both ends:"
          + " a SEND that met an empty shared receive queue and was retried): %d%n", rnrNaks);
    }
  }

  /**
   * The kernel's count of verbs objects (`rdma resource show`), for the native provider only: it
   * shows whether SRQs and MRs grow with connections or with loops. Null for another provider.
   */
  private static String rdmaResources(String provider) {
    if (!provider.equals("native")) {
      return null;
    }
    try {
      Process p = new ProcessBuilder("rdma", "resource", "show").redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).trim();
      p.waitFor();
      return out.replaceAll("\\s+", " ");
    } catch (IOException e) {
      return "(rdma resource show failed: " + e.getMessage() + ")";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "(interrupted)";
    }
  }

  /** RNR NAKs sent, all devices (rxe's {@code hw_counters/send_rnr_err}); 0 where there are none. */
  private static long rnrNaksSent() {
    long sum = 0;
    java.io.File[] devices = new java.io.File("/sys/class/infiniband").listFiles();
    for (java.io.File d : devices == null ? new java.io.File[0] : devices) {
      java.nio.file.Path counter = d.toPath().resolve("ports/1/hw_counters/send_rnr_err");
      try {
        sum += Long.parseLong(java.nio.file.Files.readString(counter).trim());
      } catch (IOException | NumberFormatException e) {
        // a device without this counter: nothing to add
      }
    }
    return sum;
  }

  private static long registered(List<RdmaConnection> conns) {
    return conns.stream().mapToLong(c -> c.statistics().registeredBytes()).sum();
  }

  private static double sec(long nanos) {
    return nanos / 1e9;
  }

  private static String arg(String[] args, int i, String dflt) {
    return args.length > i ? args[i] : dflt;
  }

  /** VmPin + VmLck from /proc/self/status (memory registration pins pages), or -1 elsewhere. */
  private static long pinnedKiB() throws IOException {
    long pin = statusKiB("VmPin:");
    return pin < 0 ? -1 : pin + statusKiB("VmLck:");
  }

  /** A KiB figure of /proc/self/status (VmRSS:, VmPin:), or -1 where there is none. */
  private static long statusKiB(String field) throws IOException {
    Path status = Path.of("/proc/self/status");
    if (!Files.exists(status)) {
      return -1;
    }
    for (String line : Files.readAllLines(status)) {
      if (line.startsWith(field)) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    return -1;
  }
}
