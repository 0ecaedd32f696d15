package io.rdmareactive.rdma.transport;

import reactor.core.publisher.Flux;

/** The receiving half of a connection. */
public interface RdmaInbound {
  /**
   * The messages from the peer, one subscriber, demand-driven: the peer may only send what this
   * subscriber's demand posted receive buffers for, so a slow subscriber slows the peer's
   * publisher instead of queueing. Completes when the connection closes (after the messages that
   * arrived before); errors when it fails, or with a RESET when the peer disconnected in the
   * middle of a fragmented message (which is lost). Without demand, at most the receive buffers'
   * worth of messages ({@code BUFFER_COUNT} + 2) wait here. Cancelling discards what arrives afterwards.
   * Release every message ({@link RdmaMessage#release()}).
   */
  Flux<RdmaMessage> receive();

  /** {@link #receive()} as copies: each message's payload as bytes, released at once. */
  default Flux<byte[]> receiveBytes() {
    return receive().map(m -> {
      try {
        return m.toByteArray();
      } finally {
        m.release();
      }
    });
  }

  /** {@link #receive()} as UTF-8 strings, each message released at once. */
  default Flux<String> receiveString() {
    return receive().map(m -> {
      try {
        return m.asString();
      } finally {
        m.release();
      }
    });
  }
}
