package io.rdmareactive.rdma;

/** The object is still in use (EBUSY): a completion channel with CQs bound to it, a PD with live children, an XRC domain with QPs or SRQs. */
public class ResourceBusyException extends NativeCallException {
  private static final long serialVersionUID = 1L;

  /** With the failing C function, its errno and errno text, and what was wrong (may be empty). */
  public ResourceBusyException(String function, int errno, String errnoText, String detail) {
    super(function, errno, errnoText, detail);
  }
}
