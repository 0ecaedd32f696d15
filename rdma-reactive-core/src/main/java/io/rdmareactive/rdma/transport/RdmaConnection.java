package io.rdmareactive.rdma.transport;

import java.net.InetSocketAddress;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/** An established duplex messaging connection over one RC queue pair. */
public interface RdmaConnection extends Disposable {
  /** What the peer sends: the messages, as a Flux whose demand is this side's flow control. */
  RdmaInbound inbound();

  /** What this side sends: each {@code send} completes once the peer's adapter acknowledged its messages. */
  RdmaOutbound outbound();

  /** The address connected to (client) or listened on (server). */
  InetSocketAddress address();

  /** Counters of this connection, as of now. */
  RdmaStatistics statistics();

  /**
   * Closes gracefully: sends already posted complete, sends still queued fail with
   * {@link io.rdmareactive.rdma.ResourceClosedException}, the peer is disconnected, inbound
   * completes and every verbs object and buffer is freed. Idempotent; never blocks.
   */
  @Override
  void dispose();

  /** Completes once the connection is closed and everything it held is freed. */
  Mono<Void> onDispose();
}
