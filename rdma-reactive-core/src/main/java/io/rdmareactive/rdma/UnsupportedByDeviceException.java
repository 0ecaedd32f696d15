package io.rdmareactive.rdma;

/** The device (or provider) does not support the operation (EOPNOTSUPP). rxe, for example, has no XRC and no thread or parent domains. */
public class UnsupportedByDeviceException extends NativeCallException {
  private static final long serialVersionUID = 1L;

  /** With the failing C function, its errno and errno text, and what was wrong (may be empty). */
  public UnsupportedByDeviceException(String function, int errno, String errnoText, String detail) {
    super(function, errno, errnoText, detail);
  }
}
