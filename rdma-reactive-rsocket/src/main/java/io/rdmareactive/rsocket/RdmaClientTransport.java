package io.rdmareactive.rsocket;

import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rsocket.DuplexConnection;
import io.rsocket.frame.FrameLengthCodec;
import io.rsocket.transport.ClientTransport;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * An RSocket {@link ClientTransport} over an rdma-reactive {@link RdmaClient}, in the shape of
 * rsocket-java's {@code TcpClientTransport}:
 *
 * <pre>{@code
 * RSocket rsocket = RSocketConnector.create().connect(RdmaClientTransport.create("10.0.0.1", 7878)).block();
 * }</pre>
 *
 * <p>Each RSocket frame travels as one RDMA message, without a length prefix: RDMA messages keep
 * their boundaries, as WebSocket frames do for rsocket's WebSocket transport. A frame larger than a
 * receive buffer ({@link RdmaOption#BUFFER_SIZE}) travels in the transport's own fragments, up to
 * {@link RdmaOption#MAX_MESSAGE_SIZE} (which therefore caps the frame size, see
 * {@link #maxFrameLength()}): RSocket's fragmentation ({@code fragment(mtu)}) is optional per
 * connection and needs both peers to agree, the transport's is transparent and always there, so
 * large payloads work whatever the RSocket peers chose. Received frames are handed to RSocket
 * without a copy, as buffers over the registered receive memory that go back to the receive
 * queue when RSocket releases them; a payload kept unreleased (with {@code PayloadDecoder.ZERO_COPY})
 * keeps a receive buffer, and so a credit of the peer, until it is released.
 *
 * <p>Backpressure composes: RSocket's REQUEST_N bounds what each stream's peer sends, and the
 * transport sends a frame only when the peer has posted a receive buffer for it (credits). Frames
 * RSocket emits faster than the peer takes them wait per connection, at most
 * {@link #maxPendingFrames(int)} of them (default {@value #DEFAULT_MAX_PENDING_FRAMES}) and
 * {@link #maxPendingBytes(long)} bytes (default 64 MiB); beyond either the connection closes with
 * an error instead of queueing without bound. A requester's REQUEST_N times the frame size should
 * fit both: 1,024 frames of 64 KiB are already more than 64 MiB.
 */
public final class RdmaClientTransport implements ClientTransport {
  /** Frames that may wait for credits per connection, by default. */
  public static final int DEFAULT_MAX_PENDING_FRAMES = 8192;
  /** Bytes of frames that may wait for credits per connection, by default (64 MiB: four of RSocket's largest frames). */
  public static final long DEFAULT_MAX_PENDING_BYTES = 64L << 20;

  private final RdmaClient client;
  private final int maxFrameLength;
  private final PendingLimit pending;
  private final @Nullable RegisteredByteBufAllocator allocator;

  private RdmaClientTransport(RdmaClient client, int maxFrameLength, PendingLimit pending, @Nullable RegisteredByteBufAllocator allocator) {
    this.client = client;
    this.maxFrameLength = maxFrameLength;
    this.pending = pending;
    this.allocator = allocator;
  }

  /** A transport connecting to {@code host:port}, with the transport's default options. */
  public static RdmaClientTransport create(String host, int port) {
    Objects.requireNonNull(host, "host");
    return create(RdmaClient.create().host(host).port(port));
  }

  /**
   * A transport connecting with {@code client}, options and all. Frames may be as large as
   * RSocket allows (16 MiB - 1), which the default {@link RdmaOption#MAX_MESSAGE_SIZE} covers.
   */
  public static RdmaClientTransport create(RdmaClient client) {
    return new RdmaClientTransport(Objects.requireNonNull(client, "client"), FrameLengthCodec.FRAME_LENGTH_MASK,
        PendingLimit.DEFAULT, null);
  }

  /**
   * A transport connecting with {@code client}, frames up to {@code maxFrameLength} bytes:
   * sets {@link RdmaOption#MAX_MESSAGE_SIZE} to it.
   */
  public static RdmaClientTransport create(RdmaClient client, int maxFrameLength) {
    Objects.requireNonNull(client, "client");
    int max = checkFrameLength(maxFrameLength);
    return new RdmaClientTransport(client.option(RdmaOption.MAX_MESSAGE_SIZE, max), max, PendingLimit.DEFAULT, null);
  }

  /** This transport, with at most {@code frames} frames waiting for credits per connection. */
  public RdmaClientTransport maxPendingFrames(int frames) {
    return new RdmaClientTransport(client, maxFrameLength, pending.frames(frames), allocator);
  }

  /** At most this many frames wait for credits per connection (default {@value #DEFAULT_MAX_PENDING_FRAMES}). */
  public int maxPendingFrames() {
    return pending.frames();
  }

  /**
   * This transport, with at most {@code bytes} bytes of frames waiting for credits per connection
   * (a lone frame larger than that still goes when nothing else waits).
   */
  public RdmaClientTransport maxPendingBytes(long bytes) {
    return new RdmaClientTransport(client, maxFrameLength, pending.bytes(bytes), allocator);
  }

  /** At most this many bytes of frames wait for credits per connection (default {@value #DEFAULT_MAX_PENDING_BYTES}). */
  public long maxPendingBytes() {
    return pending.bytes();
  }

  /** The client this transport connects with, options and all (read its {@code configuration()}). */
  public RdmaClient client() {
    return client;
  }

  /**
   * This transport, its connections' frames allocated from {@code allocator} (their
   * {@code DuplexConnection.alloc()}): those whose bytes all lie in its registered memory are sent
   * with no copy. Register it on the protection domain of the loops the connections run on
   * ({@code RdmaLoopResources.protectionDomain}, with {@code runOn} of those loops); a frame
   * from another domain's memory fails its connection, typed.
   */
  public RdmaClientTransport allocator(RegisteredByteBufAllocator allocator) {
    return new RdmaClientTransport(client, maxFrameLength, pending, Objects.requireNonNull(allocator, "allocator"));
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
  public Mono<DuplexConnection> connect() {
    return client.connect().map(c -> new RdmaDuplexConnection("client", c, pending, allocator));
  }

  static int checkFrameLength(int maxFrameLength) {
    if (maxFrameLength < 64 || maxFrameLength > FrameLengthCodec.FRAME_LENGTH_MASK) {
      throw new IllegalArgumentException("maxFrameLength must be within [64, "
          + FrameLengthCodec.FRAME_LENGTH_MASK + "]: " + maxFrameLength);
    }
    return maxFrameLength;
  }
}
