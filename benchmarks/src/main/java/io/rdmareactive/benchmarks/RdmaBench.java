package io.rdmareactive.benchmarks;

import io.rdmareactive.benchmarks.jmh.Pinger;
import io.rdmareactive.rdma.ResourceClosedException;
import io.rdmareactive.rdma.device.RdmaDevices;
import io.rdmareactive.rdma.spi.RdmaProvider;
import io.rdmareactive.rdma.transport.OutboundMessage;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.IdleStrategy;
import io.rdmareactive.rdma.transport.DisposableRdmaServer;
import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaLoopResources;
import io.rdmareactive.rdma.transport.RdmaServer;
import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import reactor.core.publisher.Flux;

/**
 * This library over one provider and completion mode: ping-pong latency and one-way streaming,
 * the same shapes as {@link TcpBench} and perftest. Nothing hops threads on the hot path: the
 * server echoes from its inbound handler and the client sends the next ping from its inbound
 * subscriber, both on their connection's completion thread ({@code rdma-cq-N} or
 * {@code rdma-poll-N}).
 */
final class RdmaBench implements EndToEnd.Bench {
  private final String host;
  private final String provider;
  private final boolean busyPoll;

  RdmaBench(String host, String provider, boolean busyPoll) {
    this.host = host;
    this.provider = provider;
    this.busyPoll = busyPoll;
  }

  @Override
  public String name() {
    return "rdma-reactive (" + (busyPoll ? "busy-poll" : "event") + ")";
  }

  private RdmaLoopResources loops() {
    // Busy-poll spins, as perftest does: backoff() parks for up to 1 ms when idle, which a
    // ping-pong or a stream waiting for credits pays on every quiet moment.
    return busyPoll ? RdmaLoopResources.threadPerConnection(IdleStrategy.spin()) : RdmaLoopResources.shared();
  }

  private RdmaServer server(int bufferSize, int bufferCount) {
    return RdmaServer.create().host(host).port(0).option(RdmaOption.PROVIDER, provider).runOn(loops())
        .option(RdmaOption.BUFFER_SIZE, bufferSize).option(RdmaOption.BUFFER_COUNT, bufferCount);
  }

  private RdmaConnection connect(int port, int bufferSize, int bufferCount) {
    return connect(port, bufferSize, bufferCount, loops());
  }

  private RdmaConnection connect(int port, int bufferSize, int bufferCount, RdmaLoopResources loops) {
    return RdmaClient.create().host(host).port(port).option(RdmaOption.PROVIDER, provider).runOn(loops)
        .option(RdmaOption.BUFFER_SIZE, bufferSize).option(RdmaOption.BUFFER_COUNT, bufferCount)
        .connectNow(Duration.ofSeconds(60));
  }

  private static void close(RdmaConnection conn) {
    conn.dispose();
    try {
      conn.onDispose().block(Duration.ofSeconds(120));
    } catch (IllegalStateException slowClose) { // a timeout: report it, but keep the figures already taken
      System.out.println("  warning: " + conn + " did not close within 120 s");
    }
  }

  private static void dispose(DisposableRdmaServer server) {
    try {
      server.disposeNow(Duration.ofSeconds(120));
    } catch (IllegalStateException slowClose) {
      System.out.println("  warning: the server at " + server.address() + " did not close within 120 s");
    }
  }

  /** Round-trip samples (ns) of {@code size}-byte ping-pongs, after {@code warmup} unrecorded ones. */
  @Override
  public Percentiles pingPong(int size, int warmup, int iterations) throws InterruptedException {
    int bufferSize = Math.max(1024, size);
    DisposableRdmaServer server = server(bufferSize, 16)
        .handle((in, out) -> out.send(in.receive())) // echo; sending a received message releases it
        .bindNow();
    try {
      RdmaConnection conn = connect(server.port(), bufferSize, 16);
      try {
        long[] samples = new long[iterations];
        int total = warmup + iterations;
        Pinger<byte[]> pinger = new Pinger<>(new byte[size]);
        CountDownLatch done = new CountDownLatch(1);
        long[] state = new long[2]; // [0] round, [1] start ns
        conn.inbound().receive().subscribe(m -> {
          long now = System.nanoTime();
          m.release();
          int round = (int) state[0];
          if (round >= warmup) {
            samples[round - warmup] = now - state[1];
          }
          if (++state[0] == total) {
            done.countDown();
            return;
          }
          state[1] = System.nanoTime();
          pinger.ping(); // on this completion thread: posts the next SEND right here
        }, e -> done.countDown());
        // The pinger never completes: closing the connection ends this send with ResourceClosedException.
        conn.outbound().send(pinger).subscribe(null, e -> {
          if (!(e instanceof ResourceClosedException)) {
            e.printStackTrace();
          }
        });
        state[1] = System.nanoTime();
        pinger.ping();
        if (!done.await(5, TimeUnit.MINUTES) || state[0] < total) {
          throw new IllegalStateException(name() + " ping-pong stopped after " + state[0] + " of " + total);
        }
        return new Percentiles(samples, iterations);
      } finally {
        close(conn);
      }
    } finally {
      dispose(server);
    }
  }

  /**
   * Streams {@code count} messages of {@code size} bytes one way; returns MB/s (10^6 bytes),
   * messages/s, and the completions the sender and the receiver polled per message (from their
   * connections' statistics).
   */
  @Override
  public double[] stream(int size, int count) throws InterruptedException {
    byte[] payload = new byte[size];
    return stream(size, count, Math.max(1024, size), bufferCount(size), loops(), () -> payload);
  }

  /** perftest's default depth is 128; 64 KiB x 32 = 2 MiB a side. */
  private static int bufferCount(int size) {
    return size >= 65536 ? 32 : 128;
  }

  /**
   * The plain stream's shape (buffers of the message's size), each message sent from one region
   * registered on the client loops' protection domain, with no copy: a {@code RegisteredMessage}
   * per send.
   */
  @Override
  public double[] streamFromRegisteredMemory(int size, int count) throws InterruptedException {
    return streamFromRegion(size, count, Access.local(), Math.max(1024, size), bufferCount(size));
  }

  /**
   * Messages of {@code size} (above RENDEZVOUS_THRESHOLD) from one region registered once on the
   * client loops' protection domain, with window binding allowed, and the default options: each
   * goes by rendezvous, the server pulling it by RDMA READ into pooled memory, nothing copied.
   */
  @Override
  public double[] streamByRendezvous(int size, int count) throws InterruptedException {
    return streamFromRegion(size, count, java.util.EnumSet.of(Access.LOCAL_WRITE, Access.MW_BIND),
        RdmaOption.BUFFER_SIZE.defaultValue(), RdmaOption.BUFFER_COUNT.defaultValue());
  }

  /** A stream of messages of {@code size}, each {@code OutboundMessage.of} one region registered once with {@code access}. */
  private double[] streamFromRegion(int size, int count, java.util.Set<Access> access, int bufferSize, int bufferCount)
      throws InterruptedException {
    RdmaLoopResources loops = loops();
    RdmaProvider p = RdmaDevices.provider(provider);
    ProtectionDomain pd = loops.protectionDomain(p, p.devices().getFirst().name());
    try (Arena arena = Arena.ofShared()) {
      MemoryRegion region = pd.registerMemory(arena.allocate(size, 4096), access);
      try {
        double[] r = stream(size, count, bufferSize, bufferCount, loops, () -> OutboundMessage.of(region, 0, size));
        return new double[] {r[0], r[1], r[4]}; // as the Bench interface says: bytes copied third
      } finally {
        region.close(); // the connection is closed: every message was released
      }
    }
  }

  /**
   * The large rows' own paths in small: 4 KiB messages on 1 KiB buffers, four fragments each,
   * copied and from registered memory. 2,500 of each make 10,000 fragments, C2's threshold, for a
   * few MB, so one warm-up round compiles what the 64 KiB rows run per fragment.
   */
  @Override
  public void warmUpLargeMessages() throws InterruptedException {
    byte[] payload = new byte[4096];
    stream(4096, 2_500, 1024, 64, loops(), () -> payload);
    streamFromRegion(4096, 2_500, Access.local(), 1024, 64);
  }

  /** The same with the default options (16 KiB buffers, 64 of them): a 64 KiB message goes as fragments. */
  @Override
  public double[] streamWithDefaults(int size, int count) throws InterruptedException {
    byte[] payload = new byte[size];
    return stream(size, count, RdmaOption.BUFFER_SIZE.defaultValue(), RdmaOption.BUFFER_COUNT.defaultValue(), loops(),
        () -> payload);
  }

  private double[] stream(int size, int count, int bufferSize, int bufferCount, RdmaLoopResources clientLoops,
      Supplier<?> messages) throws InterruptedException {
    AtomicReference<RdmaConnection> accepted = new AtomicReference<>();
    AtomicLong received = new AtomicLong();
    CountDownLatch done = new CountDownLatch(1);
    long[] end = new long[1];
    DisposableRdmaServer server = server(bufferSize, bufferCount).doOnConnection(accepted::set)
        .handle((in, out) -> in.receive().doOnNext(m -> {
          m.release();
          if (received.incrementAndGet() == count) {
            end[0] = System.nanoTime();
            done.countDown();
          }
        }).then())
        .bindNow();
    try {
      RdmaConnection conn = connect(server.port(), bufferSize, bufferCount, clientLoops);
      try {
        long start = System.nanoTime();
        conn.outbound().send(Flux.<Object, int[]>generate(() -> new int[1], (n, sink) -> {
          sink.next(messages.get());
          if (++n[0] == count) {
            sink.complete();
          }
          return n;
        })).subscribe(null, Throwable::printStackTrace);
        if (!done.await(5, TimeUnit.MINUTES)) {
          throw new IllegalStateException(name() + " stream stopped after " + received.get() + " of " + count);
        }
        double seconds = (end[0] - start) / 1e9;
        RdmaConnection receiver = accepted.get();
        return new double[] {(double) size * count / seconds / 1e6, count / seconds,
            (double) conn.statistics().completionsPolled() / count,
            receiver == null ? Double.NaN : (double) receiver.statistics().completionsPolled() / count,
            receiver == null ? Double.NaN
                : (double) (conn.statistics().bytesCopied() + receiver.statistics().bytesCopied()) / count};
      } finally {
        close(conn);
      }
    } finally {
      dispose(server);
    }
  }
}
