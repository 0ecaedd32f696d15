package io.rdmareactive.rdma.rdmacore;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.RdmaException;
import io.rdmareactive.rdma.spi.EndpointOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Helpers of the CM code over {@link Librdmacm}: typed failures, connection parameters, the
 * device contexts librdmacm opened, poll waits on CM file descriptors.
 */
final class RdmaCm {
  private RdmaCm() {}

  /** Scratch per thread: pollfd for waits, a pointer-sized out parameter. */
  private static final ThreadLocal<MemorySegment> POLLFD =
      ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(CmLayout.SIZEOF_POLLFD * 2, 8));

  static RdmaException rethrow(Throwable t) {
    return Native.rethrow(t);
  }

  /** Throws the typed failure of a -1/errno call. */
  static NativeCallException failure(String function) {
    return Native.failure(function, Native.lastErrno());
  }

  /** The {@link ConnectionException} for a connection-level errno, or null when the errno is not one. */
  static ConnectionException.@org.jspecify.annotations.Nullable Reason connectionReason(int errno) {
    return switch (errno) {
      case NativeCallException.ECONNREFUSED -> ConnectionException.Reason.REFUSED;
      case NativeCallException.ETIMEDOUT -> ConnectionException.Reason.TIMED_OUT;
      case NativeCallException.ECONNRESET -> ConnectionException.Reason.RESET;
      case NativeCallException.EADDRINUSE -> ConnectionException.Reason.ADDRESS_IN_USE;
      case NativeCallException.ENETUNREACH, NativeCallException.EHOSTUNREACH,
          NativeCallException.EADDRNOTAVAIL, NativeCallException.ENODEV -> ConnectionException.Reason.UNREACHABLE;
      default -> null;
    };
  }

  /** A connection-level failure as {@link ConnectionException} (cause: the native failure), other errno values as they are. */
  static RdmaException connectFailure(String function, int errno, String what) {
    NativeCallException cause = Native.failure(function, errno);
    ConnectionException.Reason reason = connectionReason(errno);
    return reason == null ? cause : new ConnectionException(reason, what + ": " + cause.getMessage(), cause);
  }

  /**
   * The ibv_context librdmacm uses for {@code deviceName} (rdma_get_devices: one per device and
   * process, the one every CM id on that device gets as id->verbs), borrowed. The device list is
   * freed only when the wrapper is closed: the list holds librdmacm's reference on the device, so
   * librdmacm cannot close that context (a removed device's, see {@link DeviceRemovals}) under a
   * completion channel made on it.
   */
  static NativeContext deviceContext(String deviceName) {
    MemorySegment list;
    try (Arena a = Arena.ofConfined()) {
      MemorySegment num = a.allocate(JAVA_INT);
      list = getDevices(num);
      if (list.address() == 0) {
        throw new RdmaException("rdma_get_devices failed: librdmacm found no RDMA device");
      }
      boolean kept = false;
      try {
        int n = num.get(JAVA_INT, 0);
        MemorySegment contexts = list.reinterpret(ADDRESS.byteSize() * n);
        List<String> seen = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          MemorySegment ctx = contexts.getAtIndex(ADDRESS, i);
          String name = NativeContext.deviceNameOf(ctx);
          if (name.equals(deviceName)) {
            MemorySegment held = list;
            NativeContext c = NativeContext.borrow(ctx, () -> {
              freeDevices(held);
              StrandedDevicePd.release(deviceName);
            });
            kept = true;
            return c;
          }
          seen.add(name);
        }
        throw new IllegalArgumentException("librdmacm has no device '" + deviceName + "' (it has " + seen + ")");
      } finally {
        if (!kept) {
          freeDevices(list);
        }
      }
    }
  }

  /**
   * The devices librdmacm lists now. Listing is also what makes librdmacm notice that a device was
   * removed, and close its context of it once nothing holds that (see {@link DeviceRemovals}).
   */
  static List<String> deviceNames() {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment num = a.allocate(JAVA_INT);
      MemorySegment list = getDevices(num);
      if (list.address() == 0) {
        return List.of(); // no device at all (librdmacm then refuses to update its list)
      }
      try {
        int n = num.get(JAVA_INT, 0);
        MemorySegment contexts = list.reinterpret(ADDRESS.byteSize() * n);
        List<String> names = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          names.add(NativeContext.deviceNameOf(contexts.getAtIndex(ADDRESS, i)));
        }
        return names;
      } finally {
        freeDevices(list);
      }
    }
  }

  /** rdma_get_devices: the list, NULL when there is no device. */
  private static MemorySegment getDevices(MemorySegment num) {
    try {
      return (MemorySegment) Librdmacm.GET_DEVICES.invokeExact(num);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  private static void freeDevices(MemorySegment list) {
    try {
      Librdmacm.FREE_DEVICES.invokeExact(list);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static String eventName(int event) {
    try {
      MemorySegment s = (MemorySegment) Librdmacm.EVENT_STR.invokeExact(event);
      return s.reinterpret(64).getString(0);
    } catch (Throwable t) {
      return "event " + event;
    }
  }

  static String gaiError(int code) {
    return Libc.gaiStrerror(code);
  }

  /** Sets O_NONBLOCK on {@code fd}, so reads report EAGAIN and waits go through {@link #awaitReadable}. */
  static void setNonBlocking(int fd) {
    Libc.setNonBlocking(fd);
  }

  /**
   * poll(2) for POLLIN on {@code fd} (and {@code fd2} when >= 0) for at most {@code timeoutMillis}.
   * Uses per-thread memory, never memory an object frees on close, so a concurrent close is harmless.
   *
   * @return whether something became readable (false on timeout or EINTR)
   */
  static boolean awaitReadable(int fd, int fd2, int timeoutMillis) {
    MemorySegment p = POLLFD.get();
    p.set(JAVA_INT, 0, fd);
    p.set(JAVA_SHORT, CmLayout.POLLFD_EVENTS, (short) CmLayout.POLLIN);
    p.set(JAVA_SHORT, CmLayout.POLLFD_REVENTS, (short) 0);
    p.set(JAVA_INT, CmLayout.SIZEOF_POLLFD, fd2);
    p.set(JAVA_SHORT, CmLayout.SIZEOF_POLLFD + CmLayout.POLLFD_EVENTS, (short) CmLayout.POLLIN);
    p.set(JAVA_SHORT, CmLayout.SIZEOF_POLLFD + CmLayout.POLLFD_REVENTS, (short) 0);
    int rc = Libc.poll(p, fd2 >= 0 ? 2L : 1L, timeoutMillis);
    if (rc < 0 && Native.lastErrno() != NativeCallException.EINTR) {
      throw failure("poll");
    }
    return rc > 0;
  }

  /** Copies {@code length} bytes at native {@code address} (NULL or 0 bytes: empty). */
  static byte[] copy(MemorySegment address, int length) {
    if (address.equals(MemorySegment.NULL) || length <= 0) {
      return new byte[0];
    }
    return address.reinterpret(length).toArray(JAVA_BYTE);
  }

  /** {@link #connParam(Arena, byte[], int, int)} with the default, finite retry counts. */
  static MemorySegment connParam(Arena arena, byte[] privateData) {
    return connParam(arena, privateData, EndpointOptions.DEFAULT_RETRY_COUNT, EndpointOptions.DEFAULT_RNR_RETRY);
  }

  /**
   * Fills a struct rdma_conn_param in {@code arena} (private data copied into native memory) with
   * the QP's transport and RNR retry counts (rnr 7 is infinite: see EndpointOptions).
   */
  static MemorySegment connParam(Arena arena, byte[] privateData, int retryCount, int rnrRetry) {
    if (privateData.length > 255) {
      throw new IllegalArgumentException("private data is at most 255 bytes (uint8_t private_data_len; "
          + "InfiniBand/RoCE carry 56 on connect and 196 on accept), was " + privateData.length);
    }
    MemorySegment p = arena.allocate(CmLayout.SIZEOF_CONN_PARAM, 8);
    if (privateData.length > 0) {
      MemorySegment data = arena.allocate(privateData.length);
      data.copyFrom(MemorySegment.ofArray(privateData));
      p.set(ADDRESS, CmLayout.CONN_PARAM_PRIVATE_DATA, data);
    }
    p.set(JAVA_BYTE, CmLayout.CONN_PARAM_PRIVATE_DATA_LEN, (byte) privateData.length);
    // RDMA_MAX_RESP_RES / RDMA_MAX_INIT_DEPTH: librdmacm then uses the device's (or the
    // request's) values, as it does for a NULL conn_param.
    p.set(JAVA_BYTE, CmLayout.CONN_PARAM_RESPONDER_RESOURCES, (byte) 0xFF);
    p.set(JAVA_BYTE, CmLayout.CONN_PARAM_INITIATOR_DEPTH, (byte) 0xFF);
    p.set(JAVA_BYTE, CmLayout.CONN_PARAM_RETRY_COUNT, (byte) retryCount);
    p.set(JAVA_BYTE, CmLayout.CONN_PARAM_RNR_RETRY_COUNT, (byte) rnrRetry);
    return p;
  }
}
