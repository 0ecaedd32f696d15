package io.rdmareactive.rdma;

import org.jspecify.annotations.Nullable;

/** Root of every failure rdma-reactive reports. */
public class RdmaException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public RdmaException(String message) {
    super(message);
  }

  public RdmaException(String message, @Nullable Throwable cause) {
    super(message, cause);
  }
}
