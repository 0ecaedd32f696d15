package io.rdmareactive.rdma.rdmacore;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.rdmareactive.rdma.NativeCallException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.TimeUnit;

/**
 * The libc binding: poll(2), fcntl(2), open(2), read(2), write(2), close(2) and eventfd(2) for
 * the verbs and CM file descriptors (channels, async events, XRC files, wakeups), and the error
 * texts. Each function is bound once and called with {@code invokeExact}.
 */
final class Libc {
  static final int O_RDONLY = 0, O_CREAT = 0100, O_EXCL = 0200, O_NONBLOCK = 04000, O_CLOEXEC = 02000000;
  static final int F_GETFL = 3, F_SETFL = 4;
  static final short POLLIN = 1;
  static final int EFD_NONBLOCK = O_NONBLOCK, EFD_CLOEXEC = O_CLOEXEC;
  /** Bits of {@link #awaitEither}'s result. */
  static final int FIRST_READY = 1, SECOND_READY = 2;

  private static final Native.Library LIB = Native.libc();
  private static final MethodHandle POLL = LIB.bind("poll", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT), true);
  private static final MethodHandle FCNTL = LIB.bind("fcntl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT),
      true, Linker.Option.firstVariadicArg(2));
  private static final MethodHandle OPEN = LIB.bind("open", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT),
      true, Linker.Option.firstVariadicArg(2));
  private static final MethodHandle CLOSE = LIB.bind("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT), true);
  private static final MethodHandle EVENTFD = LIB.bind("eventfd", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), true);
  /** glibc's eventfd_write(fd, value): the value goes by value, so a wakeup needs no memory. */
  private static final MethodHandle EVENTFD_WRITE = LIB.bind("eventfd_write",
      FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG), true);
  private static final MethodHandle READ = LIB.bind("read", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG), true);
  private static final MethodHandle WRITE = LIB.bind("write", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG), true);
  private static final MethodHandle STRERROR = LIB.bind("strerror", FunctionDescriptor.of(ADDRESS, JAVA_INT), false);
  private static final MethodHandle GAI_STRERROR = LIB.bind("gai_strerror", FunctionDescriptor.of(ADDRESS, JAVA_INT), false);
  /** struct pollfd {int fd; short events; short revents;}, one per thread: waits allocate nothing. */
  private static final ThreadLocal<MemorySegment> POLLFD = ThreadLocal.withInitial(() -> Arena.global().allocate(8, 4));

  private Libc() {}

  static String strerror(int errno) {
    try {
      MemorySegment s = (MemorySegment) STRERROR.invokeExact(errno);
      return s.reinterpret(256).getString(0);
    } catch (Throwable t) {
      return "errno " + errno;
    }
  }

  /** getaddrinfo's (and rdma_getaddrinfo's) error text. */
  static String gaiStrerror(int code) {
    try {
      MemorySegment s = (MemorySegment) GAI_STRERROR.invokeExact(code);
      return s.reinterpret(256).getString(0);
    } catch (Throwable t) {
      return "getaddrinfo error " + code;
    }
  }

  /** poll(2) over {@code count} pollfds: what C returns (-1 with errno captured). */
  static int poll(MemorySegment pollfds, long count, int timeoutMillis) {
    try {
      return (int) POLL.invokeExact(Native.callState(), pollfds, count, timeoutMillis);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /**
   * Waits up to {@code timeoutNanos} (rounded up to a millisecond) for {@code fd} to be readable.
   * EINTR counts as "not ready".
   */
  static boolean awaitReadable(int fd, long timeoutNanos) {
    MemorySegment p = POLLFD.get();
    p.set(JAVA_INT, 0, fd);
    p.set(JAVA_SHORT, 4, POLLIN);
    p.set(JAVA_SHORT, 6, (short) 0);
    int rc = poll(p, 1L, millis(timeoutNanos));
    if (rc < 0) {
      int errno = Native.lastErrno();
      if (errno == NativeCallException.EINTR) {
        return false;
      }
      throw Native.failure("poll", errno, "fd " + fd);
    }
    return rc > 0 && (p.get(JAVA_SHORT, 6) & POLLIN) != 0;
  }

  /**
   * poll(2) for POLLIN on two fds, whose {@code struct pollfd[2]} is {@code pollfds} (16 bytes,
   * 4-aligned). Waits up to {@code timeoutNanos} (rounded up to a millisecond). Returns
   * {@link #FIRST_READY} and/or {@link #SECOND_READY}; 0 on timeout or EINTR. Error conditions
   * (POLLERR, POLLHUP) count as ready, so that the caller's read reports them.
   */
  static int awaitEither(MemorySegment pollfds, int first, int second, long timeoutNanos) {
    pollfds.set(JAVA_INT, 0, first);
    pollfds.set(JAVA_SHORT, 4, POLLIN);
    pollfds.set(JAVA_SHORT, 6, (short) 0);
    pollfds.set(JAVA_INT, 8, second);
    pollfds.set(JAVA_SHORT, 12, POLLIN);
    pollfds.set(JAVA_SHORT, 14, (short) 0);
    int rc = poll(pollfds, 2L, millis(timeoutNanos));
    if (rc < 0) {
      int errno = Native.lastErrno();
      if (errno == NativeCallException.EINTR) {
        return 0;
      }
      throw Native.failure("poll", errno, "fds " + first + ", " + second);
    }
    if (rc == 0) {
      return 0;
    }
    return (pollfds.get(JAVA_SHORT, 6) != 0 ? FIRST_READY : 0) | (pollfds.get(JAVA_SHORT, 14) != 0 ? SECOND_READY : 0);
  }

  private static int millis(long timeoutNanos) {
    return (int) (timeoutNanos <= 0 ? 0
        : Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(timeoutNanos + 999_999)));
  }

  /** eventfd(2): the fd, or -1 with errno captured. */
  static int eventfd(int initialValue, int flags) {
    try {
      return (int) EVENTFD.invokeExact(Native.callState(), initialValue, flags);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /** eventfd(2) with {@code flags}; throws a NativeCallException on failure. */
  static int newEventFd(int flags) {
    int fd = eventfd(0, flags);
    if (fd < 0) {
      throw Native.failure("eventfd", Native.lastErrno());
    }
    return fd;
  }

  /**
   * Adds 1 to the eventfd's counter, making it readable. Never blocks (EFD_NONBLOCK); returns the
   * errno (0 on success): EAGAIN only at a counter of 2^64-2, which a drained wakeup fd never nears.
   */
  static int signal(int eventFd) {
    try {
      int rc = (int) EVENTFD_WRITE.invokeExact(Native.callState(), eventFd, 1L);
      return rc == 0 ? 0 : Native.lastErrno();
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /** read(2): bytes read, or -1 with errno captured. */
  static long read(int fd, MemorySegment buffer, long count) {
    try {
      return (long) READ.invokeExact(Native.callState(), fd, buffer, count);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /** write(2): bytes written, or -1 with errno captured. */
  static long write(int fd, MemorySegment buffer, long count) {
    try {
      return (long) WRITE.invokeExact(Native.callState(), fd, buffer, count);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /** Reads (and so resets) a non-blocking eventfd's counter into {@code buffer} (8 bytes); EAGAIN is ignored. */
  static void drain(int eventFd, MemorySegment buffer) {
    long n = read(eventFd, buffer, 8L);
    assert n == 8 || n == -1;
  }

  /** Adds O_NONBLOCK to {@code fd}'s status flags, so reads of an empty queue return EAGAIN. */
  static void setNonBlocking(int fd) {
    try {
      int flags = (int) FCNTL.invokeExact(Native.callState(), fd, F_GETFL, 0);
      if (flags < 0) {
        throw Native.failure("fcntl", Native.lastErrno(), "F_GETFL on fd " + fd);
      }
      if ((int) FCNTL.invokeExact(Native.callState(), fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        throw Native.failure("fcntl", Native.lastErrno(), "F_SETFL O_NONBLOCK on fd " + fd);
      }
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /** open(2); throws a NativeCallException naming the path. */
  static int open(String path, int flags, int mode) {
    try (Arena a = Arena.ofConfined()) {
      int fd = (int) OPEN.invokeExact(Native.callState(), a.allocateFrom(path), flags, mode);
      if (fd < 0) {
        throw Native.failure("open", Native.lastErrno(), path);
      }
      return fd;
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  static void close(int fd) {
    try {
      int rc = (int) CLOSE.invokeExact(Native.callState(), fd);
      assert rc == 0 || rc == -1;
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }
}
