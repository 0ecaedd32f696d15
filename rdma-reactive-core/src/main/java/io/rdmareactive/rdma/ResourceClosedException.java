package io.rdmareactive.rdma;

/** An object was used after it was closed. Never reaches native code. */
public class ResourceClosedException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  /** Names the closed object ({@code what} is closed). */
  public ResourceClosedException(String what) {
    super(what + " is closed");
  }
}
