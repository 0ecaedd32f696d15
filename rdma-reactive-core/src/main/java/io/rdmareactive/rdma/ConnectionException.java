package io.rdmareactive.rdma;

import org.jspecify.annotations.Nullable;

/** Establishing or keeping a connection failed; {@link #reason()} says how. */
public class ConnectionException extends RdmaException {
  private static final long serialVersionUID = 1L;

  /** Why a connection failed. */
  public enum Reason {
    /** The server refused the request: nobody listens on the port, a server limit was reached, or the hello was invalid. */
    REFUSED,
    /** No route to the address, or the address is on no RDMA device. */
    UNREACHABLE,
    /** A deadline passed: connecting, or a close's wait for sends the peer had not acknowledged. */
    TIMED_OUT,
    /** An established connection ended: the peer disconnected or broke the protocol, or a device event failed it. */
    RESET,
    /** The server's address and port are already bound. */
    ADDRESS_IN_USE,
    /** The host name did not resolve. */
    UNRESOLVED
  }

  private final Reason reason;

  /** A failure for {@code reason}, with a message and its cause (may be null). */
  public ConnectionException(Reason reason, String message, @Nullable Throwable cause) {
    super(message, cause);
    this.reason = reason;
  }

  /** How the connection failed. */
  public Reason reason() {
    return reason;
  }
}
