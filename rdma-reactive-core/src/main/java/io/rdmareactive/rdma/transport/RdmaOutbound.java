package io.rdmareactive.rdma.transport;

import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

/** The sending half of a connection. */
public interface RdmaOutbound {
  /**
   * Sends each item of {@code messages} as one message: {@code byte[]}, {@link java.nio.ByteBuffer}
   * (its remaining bytes), {@link java.lang.foreign.MemorySegment}, {@link CharSequence} (UTF-8),
   * a received {@link RdmaMessage} (copied, then released) or an {@link OutboundMessage} (it copies
   * itself into the send buffers as it is posted, then is released). Items are requested only as the
   * peer grants credits, so a slow peer slows {@code messages}; do not modify an item after
   * emitting it. Messages larger than a receive buffer travel as several fragments; one above the
   * maximum message size fails the returned Mono with
   * {@link io.rdmareactive.rdma.MessageTooLargeException} before any of it is sent, and the
   * connection stays usable. Concurrent sends go out one after another, in subscription order.
   *
   * @return completes once every message was sent and acknowledged by the peer's adapter; an
   *     error after the peer disconnected does not mean the last messages were lost, since what
   *     fails is the acknowledgment (an RC send completes on the peer's ACK, which a disconnect
   *     can overtake)
   */
  Mono<Void> send(Publisher<?> messages);

  /** {@link #send} of UTF-8 strings. */
  default Mono<Void> sendString(Publisher<? extends CharSequence> messages) {
    return send(messages);
  }
}
