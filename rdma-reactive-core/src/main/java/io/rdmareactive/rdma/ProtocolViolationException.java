package io.rdmareactive.rdma;

import java.net.InetSocketAddress;

/**
 * The peer broke the connection protocol: it sent beyond the credits granted to it, granted more
 * credits than the buffers it announced, sent a header with reserved bits or a message over the
 * maximum size. Only that connection fails (reason {@link Reason#RESET}); the server and every
 * other connection go on.
 */
public final class ProtocolViolationException extends ConnectionException {
  private final InetSocketAddress peer;

  /** The peer at {@code peer} broke the protocol as {@code violation} says; the reason is {@link Reason#RESET}. */
  public ProtocolViolationException(InetSocketAddress peer, String violation) {
    super(Reason.RESET, "the peer at " + peer + " broke the protocol: " + violation, null);
    this.peer = peer;
  }

  /** The address of the peer that broke it. */
  public InetSocketAddress peer() {
    return peer;
  }
}
