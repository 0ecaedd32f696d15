package io.rdmareactive.spring.boot;

import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rsocket.RdmaClientTransport;
import io.rsocket.frame.FrameLengthCodec;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.messaging.rsocket.RSocketRequester;

/**
 * Connects Spring {@link RSocketRequester}s over RDMA: Boot's {@code RSocketRequester.Builder}
 * (strategies, {@code RSocketConnectorConfigurer}s) with an {@link RdmaClientTransport} that has
 * the {@code rdma.rsocket.client.*} options, {@code rdma.provider} and the shared loops.
 *
 * <pre>{@code
 * RSocketRequester requester = requesters.requester("10.0.0.1", 7000);          // host and port
 * RSocketRequester pricing = requesters.requester("pricing");                   // rdma.clients.pricing.*
 * RSocketRequester custom = builder.setupRoute("hello").transport(requesters.transport(host, port));
 * }</pre>
 *
 * Requesters connect lazily, as Spring's do. Connections they made that are still open when the
 * context closes are closed then (those of named clients by {@link RdmaClients}).
 */
public class RdmaRSocketRequesters implements DisposableBean {
  private final RdmaClient client;
  private final int maxFrameLength;
  private final int maxPendingFrames;
  private final long maxPendingBytes;
  private final RdmaClients clients;
  private final Supplier<RSocketRequester.Builder> builders;
  private final Duration closeTimeout;
  private final Set<RdmaConnection> open = ConcurrentHashMap.newKeySet();

  /**
   * @param client options, provider and loops for requesters by host and port (host and port unset);
   *     its maximum message size bounds their frames
   * @param clients the named clients
   * @param builders a fresh Boot builder per call (it is a prototype bean)
   */
  RdmaRSocketRequesters(RdmaClient client, int maxPendingFrames, long maxPendingBytes, RdmaClients clients,
      Supplier<RSocketRequester.Builder> builders, Duration closeTimeout) {
    this.client = client.doOnConnected(open::add).doOnDisconnected(open::remove);
    this.maxFrameLength = frameLength(client.configuration().get(RdmaOption.MAX_MESSAGE_SIZE));
    this.maxPendingFrames = maxPendingFrames;
    this.maxPendingBytes = maxPendingBytes;
    this.clients = clients;
    this.builders = builders;
    this.closeTimeout = closeTimeout;
  }

  /** A transport to {@code host:port} with the {@code rdma.rsocket.client.*} options. */
  public RdmaClientTransport transport(String host, int port) {
    Objects.requireNonNull(host, "host");
    return RdmaClientTransport.create(client.host(host).port(port), maxFrameLength).maxPendingFrames(maxPendingFrames)
        .maxPendingBytes(maxPendingBytes);
  }

  /**
   * A transport with the client {@code rdma.clients.<name>} (its host, port and options).
   *
   * @throws IllegalArgumentException when no such client is configured
   */
  public RdmaClientTransport transport(String clientName) {
    RdmaClient named = clients.get(clientName);
    int max = frameLength(named.configuration().get(RdmaOption.MAX_MESSAGE_SIZE));
    return RdmaClientTransport.create(named, max).maxPendingFrames(maxPendingFrames).maxPendingBytes(maxPendingBytes);
  }

  /** The client requesters by host and port start from: its options are {@code rdma.rsocket.client.*}. */
  RdmaClient client() {
    return client;
  }

  /** RSocket's frames are at most 16 MiB - 1; a larger message size allows them all. */
  static int frameLength(int maxMessageSize) {
    return Math.min(maxMessageSize, FrameLengthCodec.FRAME_LENGTH_MASK);
  }

  /** A requester to {@code host:port} over RDMA, from a fresh Boot builder. */
  public RSocketRequester requester(String host, int port) {
    return builder().transport(transport(host, port));
  }

  /** A requester over RDMA with the client {@code rdma.clients.<name>}. */
  public RSocketRequester requester(String clientName) {
    return builder().transport(transport(clientName));
  }

  /** A fresh Boot {@code RSocketRequester.Builder}, for a requester with its own settings. */
  public RSocketRequester.Builder builder() {
    return builders.get();
  }

  /** Connections made through {@link #transport(String, int)} and not yet closed. */
  public int openConnections() {
    return open.size();
  }

  @Override
  public void destroy() {
    RdmaClients.closeAll(open, closeTimeout);
  }

  /** How long closing waits for the open connections ({@code rdma.server.shutdown-timeout}). */
  Duration closeTimeout() {
    return closeTimeout;
  }

  /** Frames waiting for credits per connection, at most ({@code rdma.rsocket.client.max-pending-frames}). */
  int maxPendingFrames() {
    return maxPendingFrames;
  }

  /** Bytes of frames waiting for credits per connection, at most ({@code rdma.rsocket.client.max-pending-bytes}). */
  long maxPendingBytes() {
    return maxPendingBytes;
  }
}
