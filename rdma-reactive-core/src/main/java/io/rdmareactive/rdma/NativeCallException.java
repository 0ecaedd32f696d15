package io.rdmareactive.rdma;

/**
 * A verbs or RDMA CM call failed. Carries the C function's name and the errno it reported.
 * Use {@link #of} so that well-known errno values become their specific subtype.
 */
public class NativeCallException extends RdmaException {
  private static final long serialVersionUID = 1L;

  /** errno values the hierarchy distinguishes (Linux numbering, as the kernel reports them). */
  public static final int EPERM = 1, ENOENT = 2, EINTR = 4, EIO = 5, EAGAIN = 11, ENOMEM = 12,
      EACCES = 13, EFAULT = 14, EBUSY = 16, EEXIST = 17, ENODEV = 19, EINVAL = 22, ENOSPC = 28,
      ENOSYS = 38, EOPNOTSUPP = 95, EADDRINUSE = 98, EADDRNOTAVAIL = 99, ENETUNREACH = 101,
      ECONNRESET = 104, ETIMEDOUT = 110, ECONNREFUSED = 111, EHOSTUNREACH = 113;

  private final String function;
  private final int errno;

  /** With the failing C function, its errno and errno text, and what was wrong (may be empty); use {@link #of} for the specific subtype. */
  protected NativeCallException(String function, int errno, String errnoText, String detail) {
    super(function + " failed: " + errnoText + " (errno " + errno + ")" + (detail.isEmpty() ? "" : ": " + detail));
    this.function = function;
    this.errno = errno;
  }

  /** The failing function, as named in C (e.g. {@code ibv_open_xrcd}). */
  public String function() {
    return function;
  }

  /** The errno the function reported. */
  public int errno() {
    return errno;
  }

  /** Builds the most specific exception for {@code errno}. */
  public static NativeCallException of(String function, int errno, String errnoText) {
    return of(function, errno, errnoText, "");
  }

  /** Builds the most specific exception for {@code errno}, with a detail naming what was wrong. */
  public static NativeCallException of(String function, int errno, String errnoText, String detail) {
    return switch (errno) {
      case EOPNOTSUPP, ENOSYS -> new UnsupportedByDeviceException(function, errno, errnoText, detail);
      case EBUSY -> new ResourceBusyException(function, errno, errnoText, detail);
      case EEXIST -> new AlreadyExistsException(function, errno, errnoText, detail);
      default -> new NativeCallException(function, errno, errnoText, detail);
    };
  }

  /** errno text for providers that have no strerror (the in-memory one). */
  public static String describe(int errno) {
    return switch (errno) {
      case EPERM -> "Operation not permitted";
      case ENOENT -> "No such file or directory";
      case EAGAIN -> "Resource temporarily unavailable";
      case ENOMEM -> "Cannot allocate memory";
      case EACCES -> "Permission denied";
      case EFAULT -> "Bad address";
      case EBUSY -> "Device or resource busy";
      case EEXIST -> "File exists";
      case ENODEV -> "No such device";
      case EINVAL -> "Invalid argument";
      case ENOSPC -> "No space left on device";
      case ENOSYS -> "Function not implemented";
      case EOPNOTSUPP -> "Operation not supported";
      case EADDRINUSE -> "Address already in use";
      case ENETUNREACH -> "Network is unreachable";
      case ECONNRESET -> "Connection reset by peer";
      case ETIMEDOUT -> "Connection timed out";
      case ECONNREFUSED -> "Connection refused";
      case EHOSTUNREACH -> "No route to host";
      default -> "errno " + errno;
    };
  }
}
