package io.rdmareactive.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.rdmareactive.rdma.device.RdmaDevices;
import io.rdmareactive.rdma.spi.RdmaProvider;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaLoopResources;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaServer;
import io.rdmareactive.rsocket.RdmaClientTransport;
import io.rdmareactive.rsocket.RdmaServerTransport;
import io.rdmareactive.rsocket.RegisteredByteBufAllocator;
import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.SocketAcceptor;
import io.rsocket.core.RSocketConnector;
import io.rsocket.core.RSocketServer;
import io.rsocket.frame.decoder.PayloadDecoder;
import io.rsocket.transport.ClientTransport;
import io.rsocket.transport.ServerTransport;
import io.rsocket.transport.netty.client.TcpClientTransport;
import io.rsocket.transport.netty.server.TcpServerTransport;
import io.rsocket.util.ByteBufPayload;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.resources.LoopResources;
import reactor.netty.tcp.TcpClient;
import reactor.netty.tcp.TcpServer;

/**
 * RSocket over a transport, as Spring's RSocket users would run it: request-response latency
 * (the ping-pong, RTT/2) and request-stream throughput (the server streams {@code count} payloads
 * to the requester, REQUEST_N in batches of at most {@value #DEMAND}, fewer where a batch would
 * ask for more than {@link #DEMAND_BYTES}: {@link #demand}). Both peers
 * decode with {@code PayloadDecoder.ZERO_COPY} (as Spring does with Netty buffers). The next
 * request is issued on the thread the previous response arrived on (no thread hop), as in the
 * other JVM benches.
 */
final class RSocketBench implements EndToEnd.Bench {
  private static final Duration WAIT = Duration.ofMinutes(5);
  /**
   * REQUEST_N per batch (replenished at 75%). RSocket pushes frames to its transport without
   * backpressure, so an unbounded request lets a fast stream run ahead of the link: TCP then
   * buffers without bound in Netty, the RDMA transport closes the connection once
   * {@code maxPendingFrames} frames or {@code maxPendingBytes} bytes wait for credits. Bounded
   * demand is how a requester keeps both honest, and it is the same for both. At most
   * {@link #DEMAND_BYTES} a batch: 1,024 frames of 64 KiB would ask for more than the transport's
   * default 64 MiB, and a responder running a batch ahead of the link lost its connection (seen
   * in session 22, on a loaded host).
   */
  static final int DEMAND = 1024;
  /** The most one batch asks for, in payload bytes: half the transport's default maxPendingBytes. */
  static final long DEMAND_BYTES = 32L << 20;

  private final String name;
  private final Servers servers;
  private final ToIntFunction<io.rsocket.Closeable> ports;
  private final Clients clients;
  /** A fresh allocator of registered frames, or null where the transport has none (TCP). */
  private final @Nullable Supplier<RegisteredByteBufAllocator> registered;
  /**
   * Frames of the registered path's warm-up: past C2's compile threshold (10,000 invocations with
   * -XX:-TieredCompilation, as in the VM), small so that it takes a second or two there.
   */
  private static final int WARM_UP_FRAMES = 12_000;
  private static final int WARM_UP_SIZE = 4096;
  /** Whether {@link #streamFromRegisteredMemory} ran its warm-up. */
  private boolean registeredWarm;
  /** The RDMA connections made, each side's (their statistics), filled by the transports; empty for TCP. */
  private final List<RdmaConnection> serverSide;
  private final List<RdmaConnection> clientSide;

  /** A server transport for frames of {@code size}, its frames from {@code alloc} where not null. */
  interface Servers {
    ServerTransport<? extends io.rsocket.Closeable> apply(int size, @Nullable RegisteredByteBufAllocator alloc);
  }

  /** A client transport to {@code port} for frames of {@code size}, its frames from {@code alloc} where not null. */
  interface Clients {
    ClientTransport apply(int port, int size, @Nullable RegisteredByteBufAllocator alloc);
  }

  private RSocketBench(String name, Servers servers, ToIntFunction<io.rsocket.Closeable> ports, Clients clients,
      @Nullable Supplier<RegisteredByteBufAllocator> registered, List<RdmaConnection> serverSide,
      List<RdmaConnection> clientSide) {
    this.name = name;
    this.servers = servers;
    this.ports = ports;
    this.clients = clients;
    this.registered = registered;
    this.serverSide = serverSide;
    this.clientSide = clientSide;
  }

  /** RSocket over this library, event mode, buffers sized to hold a frame of the largest payload. */
  static RSocketBench rdma(String host, String provider) {
    RdmaLoopResources loops = RdmaLoopResources.shared();
    List<RdmaConnection> serverSide = new CopyOnWriteArrayList<>();
    List<RdmaConnection> clientSide = new CopyOnWriteArrayList<>();
    return new RSocketBench("rsocket over rdma-reactive (event)",
        (size, alloc) -> {
          RdmaServerTransport t = RdmaServerTransport.create(options(RdmaServer.create().host(host).port(0)
              .option(RdmaOption.PROVIDER, provider).runOn(loops).doOnConnection(serverSide::add), size));
          return alloc == null ? t : t.allocator(alloc);
        },
        s -> ((io.rdmareactive.rsocket.CloseableRdmaServer) s).address().getPort(),
        (port, size, alloc) -> {
          RdmaClientTransport t = RdmaClientTransport.create(options(RdmaClient.create().host(host).port(port)
              .option(RdmaOption.PROVIDER, provider).runOn(loops).connectTimeout(Duration.ofSeconds(60))
              .doOnConnected(clientSide::add), size));
          return alloc == null ? t : t.allocator(alloc);
        },
        () -> {
          RdmaProvider p = RdmaDevices.provider(provider);
          return RegisteredByteBufAllocator.create(loops.protectionDomain(p, p.devices().getFirst().name()), 64L << 20);
        }, serverSide, clientSide);
  }

  /** RSocket over rsocket-transport-netty's TCP, one event loop thread per side (as {@link TcpBench}). */
  static RSocketBench tcp(String host) {
    LoopResources serverLoop = LoopResources.create("bench-rsocket-server", 1, true);
    LoopResources clientLoop = LoopResources.create("bench-rsocket-client", 1, true);
    return new RSocketBench("rsocket over tcp",
        (size, alloc) -> TcpServerTransport.create(TcpServer.create().runOn(serverLoop).host(host).port(0)),
        s -> ((InetSocketAddress) ((io.rsocket.transport.netty.server.CloseableChannel) s).address()).getPort(),
        (port, size, alloc) -> TcpClientTransport.create(TcpClient.create().runOn(clientLoop).host(host).port(port)),
        null, List.of(), List.of());
  }

  /**
   * Buffers that carry every frame whole (a frame's header is a few bytes: the payload plus 1 KiB)
   * and leave room to batch: at least the default 16 KiB, so that the frames queued at a drain's
   * end can share a SEND (a buffer of one frame's size would make every frame its own SEND).
   */
  static int bufferSize(int size) {
    return Math.max(16384, size + 1024);
  }

  private static RdmaServer options(RdmaServer s, int size) {
    return s.option(RdmaOption.BUFFER_SIZE, bufferSize(size)).option(RdmaOption.BUFFER_COUNT, size >= 65536 ? 32 : 128);
  }

  private static RdmaClient options(RdmaClient c, int size) {
    return c.option(RdmaOption.BUFFER_SIZE, bufferSize(size)).option(RdmaOption.BUFFER_COUNT, size >= 65536 ? 32 : 128);
  }

  @Override
  public String name() {
    return name;
  }

  /** Round trips (ns) of {@code size}-byte request-responses (the server echoes), after {@code warmup}. */
  @Override
  public Percentiles pingPong(int size, int warmup, int iterations) {
    return with(size, null, SocketAcceptor.forRequestResponse(Mono::just), rsocket -> {
      long[] samples = new long[iterations];
      byte[] data = new byte[size];
      long[] state = new long[2]; // [0] round, [1] start ns
      Flux.defer(() -> {
        state[1] = System.nanoTime();
        return rsocket.requestResponse(ByteBufPayload.create(Unpooled.wrappedBuffer(data)));
      }).doOnNext(p -> {
        long now = System.nanoTime();
        p.release();
        int round = (int) state[0]++;
        if (round >= warmup) {
          samples[round - warmup] = now - state[1];
        }
      }).repeat(warmup + iterations - 1L).then().block(WAIT);
      if (state[0] != warmup + iterations) {
        throw new IllegalStateException(name + " ping-pong stopped after " + state[0] + " of " + (warmup + iterations));
      }
      return new Percentiles(samples, iterations);
    });
  }

  /** Requests a stream of {@code count} {@code size}-byte payloads; MB/s (10^6 bytes) and messages/s at the requester. */
  @Override
  public double[] stream(int size, int count) {
    byte[] data = new byte[size];
    SocketAcceptor streamer = SocketAcceptor.forRequestStream(request -> {
      request.release();
      return Flux.range(0, count).map(i -> ByteBufPayload.create(Unpooled.wrappedBuffer(data)));
    });
    return with(size, null, streamer, rsocket -> timed(rsocket, size, count));
  }

  /**
   * The same stream with every frame from a {@link RegisteredByteBufAllocator} on both sides: the
   * responder sends one registered 64 KiB buffer again and again (a retained duplicate per payload,
   * as {@code OutboundMessage.of} resends one region), so neither transport copies a byte. Adds the
   * bytes both sides' transports copied per message (0 expected) to {MB/s, messages/s}.
   */
  @Override
  public double @Nullable [] streamFromRegisteredMemory(int size, int count) {
    if (registered == null) {
      return null;
    }
    if (!registeredWarm) { // the warm-up rounds never ran this path: JIT it first, unmeasured
      registeredWarm = true;
      registeredStream(WARM_UP_SIZE, WARM_UP_FRAMES);
    }
    return registeredStream(size, count);
  }

  private double[] registeredStream(int size, int count) {
    RegisteredByteBufAllocator alloc = registered.get();
    ByteBuf data = alloc.buffer(size).writeZero(size);
    try {
      SocketAcceptor streamer = SocketAcceptor.forRequestStream(request -> {
        request.release();
        return Flux.range(0, count).map(i -> ByteBufPayload.create(data.retainedDuplicate()));
      });
      serverSide.clear();
      clientSide.clear();
      double[] r = with(size, alloc, streamer, rsocket -> timed(rsocket, size, count));
      long copied = 0;
      for (RdmaConnection c : serverSide) {
        copied += c.statistics().bytesCopied();
      }
      for (RdmaConnection c : clientSide) {
        copied += c.statistics().bytesCopied();
      }
      return new double[] {r[0], r[1], (double) copied / count};
    } finally {
      data.release();
      alloc.dispose(); // the slab goes once the last frame over it is released (the connections are closed)
    }
  }

  /** REQUEST_N per batch for payloads of {@code size}: {@link #DEMAND}, fewer where they would pass {@link #DEMAND_BYTES}. */
  static int demand(int size) {
    return (int) Math.max(1, Math.min(DEMAND, DEMAND_BYTES / Math.max(1, size)));
  }

  /** Requests the stream; {MB/s, messages/s} at the requester. */
  private double[] timed(RSocket rsocket, int size, int count) {
    long start = System.nanoTime();
    Long n = rsocket.requestStream(ByteBufPayload.create(Unpooled.EMPTY_BUFFER))
        .limitRate(demand(size))
        .doOnNext(Payload::release)
        .count()
        .block(WAIT);
    double seconds = (System.nanoTime() - start) / 1e9;
    if (n == null || n != count) {
      throw new IllegalStateException(name + " stream ended after " + n + " of " + count);
    }
    return new double[] {(double) size * count / seconds / 1e6, count / seconds};
  }

  private interface Body<T> {
    T run(RSocket rsocket);
  }

  private <T> T with(int size, @Nullable RegisteredByteBufAllocator alloc, SocketAcceptor acceptor, Body<T> body) {
    io.rsocket.Closeable server = RSocketServer.create(acceptor).payloadDecoder(PayloadDecoder.ZERO_COPY)
        .bind(servers.apply(size, alloc)).block(WAIT);
    try {
      RSocket rsocket = RSocketConnector.create().payloadDecoder(PayloadDecoder.ZERO_COPY)
          .connect(clients.apply(ports.applyAsInt(server), size, alloc)).block(WAIT);
      try {
        return body.run(rsocket);
      } finally {
        close(rsocket);
      }
    } finally {
      close(server);
    }
  }

  private void close(Disposable closeable) {
    closeable.dispose();
    Mono<Void> closed = closeable instanceof io.rsocket.Closeable c ? c.onClose() : Mono.empty();
    try {
      closed.onErrorComplete().block(Duration.ofSeconds(120));
    } catch (IllegalStateException slowClose) { // a timeout: keep the figures already taken
      System.out.println("  warning: " + name + ": " + closeable + " did not close within 120 s");
    }
  }
}
