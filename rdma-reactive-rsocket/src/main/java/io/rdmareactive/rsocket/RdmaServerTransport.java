package io.rdmareactive.rsocket;

import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaServer;
import io.rsocket.frame.FrameLengthCodec;
import io.rsocket.transport.ServerTransport;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * An RSocket {@link ServerTransport} over an rdma-reactive {@link RdmaServer}, in the shape of
 * rsocket-java's {@code TcpServerTransport}:
 *
 * <pre>{@code
 * CloseableRdmaServer server = RSocketServer.create(SocketAcceptor.with(handler))
 *     .bind(RdmaServerTransport.create("10.0.0.1", 7878)).block();
 * }</pre>
 *
 * One RSocket frame per RDMA message, large frames in the transport's fragments, received frames
 * without a copy, bounded waiting for credits: see {@link RdmaClientTransport}, which says why.
 * The server's handler is replaced: each connection is RSocket's.
 */
public final class RdmaServerTransport implements ServerTransport<CloseableRdmaServer> {
  private static final Logger log = Loggers.getLogger(RdmaServerTransport.class);

  private final RdmaServer server;
  private final int maxFrameLength;
  private final PendingLimit pending;
  private final @Nullable RegisteredByteBufAllocator allocator;

  private RdmaServerTransport(RdmaServer server, int maxFrameLength, PendingLimit pending, @Nullable RegisteredByteBufAllocator allocator) {
    this.server = server;
    this.maxFrameLength = maxFrameLength;
    this.pending = pending;
    this.allocator = allocator;
  }

  /** A server on {@code host:port} ({@code 0}: any free port), the transport's default options. */
  public static RdmaServerTransport create(String host, int port) {
    Objects.requireNonNull(host, "host");
    return create(RdmaServer.create().host(host).port(port));
  }

  /** A server bound as {@code server} says, options and all (its handler is not used). */
  public static RdmaServerTransport create(RdmaServer server) {
    return new RdmaServerTransport(Objects.requireNonNull(server, "server"), FrameLengthCodec.FRAME_LENGTH_MASK,
        PendingLimit.DEFAULT, null);
  }

  /** As {@link #create(RdmaServer)}, frames up to {@code maxFrameLength}: sets {@link RdmaOption#MAX_MESSAGE_SIZE}. */
  public static RdmaServerTransport create(RdmaServer server, int maxFrameLength) {
    Objects.requireNonNull(server, "server");
    int max = RdmaClientTransport.checkFrameLength(maxFrameLength);
    return new RdmaServerTransport(server.option(RdmaOption.MAX_MESSAGE_SIZE, max), max, PendingLimit.DEFAULT, null);
  }

  /** This transport, with at most {@code frames} frames waiting for credits per connection. */
  public RdmaServerTransport maxPendingFrames(int frames) {
    return new RdmaServerTransport(server, maxFrameLength, pending.frames(frames), allocator);
  }

  /** At most this many frames wait for credits per connection (default {@value RdmaClientTransport#DEFAULT_MAX_PENDING_FRAMES}). */
  public int maxPendingFrames() {
    return pending.frames();
  }

  /**
   * This transport, with at most {@code bytes} bytes of frames waiting for credits per
   * connection: what a requester's REQUEST_N times the frame size may reach (a lone frame larger
   * than that still goes when nothing else waits).
   */
  public RdmaServerTransport maxPendingBytes(long bytes) {
    return new RdmaServerTransport(server, maxFrameLength, pending.bytes(bytes), allocator);
  }

  /** At most this many bytes of frames wait for credits per connection (default {@value RdmaClientTransport#DEFAULT_MAX_PENDING_BYTES}). */
  public long maxPendingBytes() {
    return pending.bytes();
  }

  /** The server this transport binds, options and all (read its {@code configuration()}). */
  public RdmaServer server() {
    return server;
  }

  /**
   * This transport, its connections' frames allocated from {@code allocator} (their
   * {@code DuplexConnection.alloc()}): those whose bytes all lie in its registered memory are sent
   * with no copy. Register it on the protection domain of the loops the connections run on
   * ({@code RdmaLoopResources.protectionDomain}, with {@code runOn} of those loops); a frame
   * from another domain's memory fails its connection, typed.
   */
  public RdmaServerTransport allocator(RegisteredByteBufAllocator allocator) {
    return new RdmaServerTransport(server, maxFrameLength, pending, Objects.requireNonNull(allocator, "allocator"));
  }

  /** The allocator of the connections' frames, or null for Netty's default (frames copied into send buffers). */
  public @Nullable RegisteredByteBufAllocator allocator() {
    return allocator;
  }

  @Override
  public int maxFrameLength() {
    return maxFrameLength;
  }

  @Override
  public Mono<CloseableRdmaServer> start(ConnectionAcceptor acceptor) {
    Objects.requireNonNull(acceptor, "acceptor");
    return server
        .handle((in, out) -> Mono.never()) // the connection lives until RSocket or the peer closes it
        .doOnConnection(c -> accept(acceptor, c))
        .bind()
        .map(CloseableRdmaServer::new);
  }

  private void accept(ConnectionAcceptor acceptor, RdmaConnection c) {
    RdmaDuplexConnection duplex = new RdmaDuplexConnection("server", c, pending, allocator);
    var d = acceptor.apply(duplex).then(Mono.<Void>never()).subscribe(null, e -> {
      log.debug("rdma-reactive-rsocket: accepting " + c + " failed", e);
      c.dispose();
    });
    c.onDispose().subscribe(null, null, d::dispose);
  }
}
