package io.rdmareactive.rdma.spi;

/**
 * A connect request a {@link Listener} received, before anything is built for it: its private
 * data and retry counts can be checked, and it refused, without a verbs object or a buffer
 * existing on this side. The taker calls exactly one of {@link #createEndpoint()} and
 * {@link #reject(byte[])}; either frees the request.
 */
public interface ConnectRequest {
  /** The initiator's private data (may be padded with zeros by the fabric). */
  byte[] privateData();

  /**
   * The transport retries the initiator asked for (0 .. 7). The CM applies them to this side's
   * queue pair too, so a server that must bound its own retries checks them here.
   */
  int retryCount();

  /** The receiver-not-ready retries the initiator asked for (0 .. 7, 7 meaning forever), applied to both sides as {@link #retryCount()}. */
  int rnrRetry();

  /**
   * Builds the passive endpoint (protection domain, CQ, QP in INIT) for this request, ready for
   * {@link Endpoint#establish()}. Blocking: never call it on the provider's connection-manager
   * thread (it then throws {@link IllegalStateException}). When building fails the request is
   * rejected and freed, and this throws.
   *
   * @throws IllegalStateException when the request was already taken or rejected
   */
  Endpoint createEndpoint();

  /**
   * Refuses the request (rdma_reject) with {@code privateData} (at most
   * {@link EndpointOptions#MAX_PRIVATE_DATA} bytes), which the initiator sees as its reject's, and
   * frees it. Does nothing when the request was already taken or rejected. Never blocks.
   */
  void reject(byte[] privateData);
}
