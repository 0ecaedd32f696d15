package io.rdmareactive.rdma;

import org.jspecify.annotations.Nullable;

/** Root of every failure rdma-reactive reports. */
public class RdmaException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** With a message saying what failed. */
  public RdmaException(String message) {
    super(message);
  }

  /** With a message saying what failed, and its cause (may be null). */
  public RdmaException(String message, @Nullable Throwable cause) {
    super(message, cause);
  }
}
