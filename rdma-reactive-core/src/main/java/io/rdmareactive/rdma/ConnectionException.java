package io.rdmareactive.rdma;

import org.jspecify.annotations.Nullable;

/** Establishing or keeping a connection failed; {@link #reason()} says how. */
public class ConnectionException extends RdmaException {
  private static final long serialVersionUID = 1L;

  /** Why a connection failed. */
  public enum Reason { REFUSED, UNREACHABLE, TIMED_OUT, RESET, ADDRESS_IN_USE, UNRESOLVED }

  private final Reason reason;

  public ConnectionException(Reason reason, String message, @Nullable Throwable cause) {
    super(message, cause);
    this.reason = reason;
  }

  public Reason reason() {
    return reason;
  }
}
