package io.rdmareactive.rdma;

/** An exclusive create found the object already there (EEXIST), e.g. an XRC domain opened with {@code exclusive} for a file whose inode already names one. */
public class AlreadyExistsException extends NativeCallException {
  private static final long serialVersionUID = 1L;

  /** With the failing C function, its errno and errno text, and what was wrong (may be empty). */
  public AlreadyExistsException(String function, int errno, String errnoText, String detail) {
    super(function, errno, errnoText, detail);
  }
}
