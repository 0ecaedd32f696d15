package io.rdmareactive.rdma.nativ;

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
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;

/**
 * librdmacm downcalls (plus the libibverbs and libc calls the CM helpers need), and the inline
 * helpers of rdma_verbs.h re-done in Java through the ops table of struct ibv_context, exactly as
 * verbs.h does. Calls that report errors as -1 with errno take {@link Native#callState()} first.
 */
final class RdmaCm {
  private RdmaCm() {}

  /** Loaded on first use, so that a host without librdmacm fails only when the CM is used. */
  static final class H {
    private static final SymbolLookup CM = Native.load("librdmacm.so.1");
    private static final SymbolLookup VERBS = Native.load("libibverbs.so.1");
    private static final SymbolLookup LIBC = Native.LINKER.defaultLookup();

    static final MethodHandle GETADDRINFO = cm("rdma_getaddrinfo", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    static final MethodHandle FREEADDRINFO = Native.downcall(CM, "rdma_freeaddrinfo", FunctionDescriptor.ofVoid(ADDRESS), false);
    static final MethodHandle CREATE_EP = cm("rdma_create_ep", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    static final MethodHandle DESTROY_EP = Native.downcall(CM, "rdma_destroy_ep", FunctionDescriptor.ofVoid(ADDRESS), false);
    static final MethodHandle CREATE_ID = cm("rdma_create_id", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT));
    static final MethodHandle LISTEN = cm("rdma_listen", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    static final MethodHandle GET_REQUEST = cm("rdma_get_request", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    static final MethodHandle ACCEPT = cm("rdma_accept", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    static final MethodHandle REJECT = cm("rdma_reject", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_BYTE));
    static final MethodHandle CONNECT = cm("rdma_connect", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    static final MethodHandle DISCONNECT = cm("rdma_disconnect", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    static final MethodHandle CREATE_EVENT_CHANNEL = cm("rdma_create_event_channel", FunctionDescriptor.of(ADDRESS));
    static final MethodHandle DESTROY_EVENT_CHANNEL = Native.downcall(CM, "rdma_destroy_event_channel", FunctionDescriptor.ofVoid(ADDRESS), false);
    static final MethodHandle MIGRATE_ID = cm("rdma_migrate_id", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    static final MethodHandle GET_CM_EVENT = cm("rdma_get_cm_event", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    static final MethodHandle ACK_CM_EVENT = cm("rdma_ack_cm_event", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    static final MethodHandle RESOLVE_ADDR = cm("rdma_resolve_addr", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT));
    static final MethodHandle RESOLVE_ROUTE = cm("rdma_resolve_route", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    static final MethodHandle CREATE_QP = cm("rdma_create_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    static final MethodHandle DESTROY_QP = Native.downcall(CM, "rdma_destroy_qp", FunctionDescriptor.ofVoid(ADDRESS), false);
    static final MethodHandle BIND_ADDR = cm("rdma_bind_addr", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    static final MethodHandle GET_SRC_PORT = Native.downcall(CM, "rdma_get_src_port", FunctionDescriptor.of(JAVA_SHORT, ADDRESS), false);
    static final MethodHandle GET_DEVICES = Native.downcall(CM, "rdma_get_devices", FunctionDescriptor.of(ADDRESS, ADDRESS), false);
    static final MethodHandle FREE_DEVICES = Native.downcall(CM, "rdma_free_devices", FunctionDescriptor.ofVoid(ADDRESS), false);
    static final MethodHandle EVENT_STR = Native.downcall(CM, "rdma_event_str", FunctionDescriptor.of(ADDRESS, JAVA_INT), false);

    static final MethodHandle REG_MR = Native.downcall(VERBS, "ibv_reg_mr",
        FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT), true);
    static final MethodHandle DEREG_MR = Native.downcall(VERBS, "ibv_dereg_mr", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
    static final MethodHandle GET_CQ_EVENT = Native.downcall(VERBS, "ibv_get_cq_event",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), true);
    static final MethodHandle ACK_CQ_EVENTS = Native.downcall(VERBS, "ibv_ack_cq_events",
        FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT), false);

    // Function pointers from struct ibv_context.ops (first argument: the pointer).
    static final MethodHandle OPS_POST = Native.pointerCall(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    static final MethodHandle OPS_POLL_CQ = Native.pointerCall(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS));
    static final MethodHandle OPS_REQ_NOTIFY_CQ = Native.pointerCall(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));

    static final MethodHandle POLL = Native.downcall(LIBC, "poll", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT), true);
    static final MethodHandle FCNTL = Native.LINKER.downcallHandle(LIBC.find("fcntl").orElseThrow(),
        FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT),
        Linker.Option.firstVariadicArg(2), Linker.Option.captureCallState("errno"));
    static final MethodHandle EVENTFD = Native.downcall(LIBC, "eventfd", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), true);
    static final MethodHandle WRITE = Native.downcall(LIBC, "write", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG), false);
    static final MethodHandle READ = Native.downcall(LIBC, "read", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG), false);
    static final MethodHandle CLOSE = Native.downcall(LIBC, "close", FunctionDescriptor.of(JAVA_INT, JAVA_INT), false);
    static final MethodHandle GAI_STRERROR = Native.downcall(LIBC, "gai_strerror", FunctionDescriptor.of(ADDRESS, JAVA_INT), false);

    private static MethodHandle cm(String name, FunctionDescriptor fd) {
      return Native.downcall(CM, name, fd, true);
    }

    private H() {}
  }

  /** Scratch per thread: pollfd for waits, a pointer-sized out parameter. */
  private static final ThreadLocal<MemorySegment> POLLFD =
      ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(CmLayout.SIZEOF_POLLFD * 2, 8));

  static RdmaException rethrow(Throwable t) {
    if (t instanceof RuntimeException r) {
      throw r;
    }
    if (t instanceof Error e) {
      throw e;
    }
    throw new RdmaException("unexpected failure of a native call", t);
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
   * process, the one every CM id on that device gets as id->verbs), borrowed.
   */
  static NativeContext deviceContext(Verbs verbs, String deviceName) {
    MemorySegment list;
    try (Arena a = Arena.ofConfined()) {
      MemorySegment num = a.allocate(JAVA_INT);
      try {
        list = (MemorySegment) H.GET_DEVICES.invokeExact(num);
      } catch (Throwable t) {
        throw rethrow(t);
      }
      if (list.address() == 0) {
        throw new RdmaException("rdma_get_devices failed: librdmacm found no RDMA device");
      }
      try {
        int n = num.get(JAVA_INT, 0);
        MemorySegment contexts = list.reinterpret(ADDRESS.byteSize() * n);
        List<String> seen = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          NativeContext c = NativeContext.borrow(verbs, contexts.getAtIndex(ADDRESS, i));
          if (c.deviceName().equals(deviceName)) {
            return c;
          }
          seen.add(c.deviceName());
          c.close();
        }
        throw new IllegalArgumentException("librdmacm has no device '" + deviceName + "' (it has " + seen + ")");
      } finally {
        try {
          H.FREE_DEVICES.invokeExact(list);
        } catch (Throwable t) {
          throw rethrow(t);
        }
      }
    }
  }

  static String eventName(int event) {
    try {
      MemorySegment s = (MemorySegment) H.EVENT_STR.invokeExact(event);
      return s.reinterpret(64).getString(0);
    } catch (Throwable t) {
      return "event " + event;
    }
  }

  static String gaiError(int code) {
    try {
      MemorySegment s = (MemorySegment) H.GAI_STRERROR.invokeExact(code);
      return s.reinterpret(256).getString(0);
    } catch (Throwable t) {
      return "getaddrinfo error " + code;
    }
  }

  /** Sets O_NONBLOCK on {@code fd}, so reads report EAGAIN and waits go through {@link #awaitReadable}. */
  static void setNonBlocking(int fd) {
    try {
      int flags = (int) H.FCNTL.invokeExact(Native.callState(), fd, (int) CmLayout.F_GETFL, 0);
      if (flags < 0) {
        throw failure("fcntl");
      }
      int rc = (int) H.FCNTL.invokeExact(Native.callState(), fd, (int) CmLayout.F_SETFL, flags | (int) CmLayout.O_NONBLOCK);
      if (rc < 0) {
        throw failure("fcntl");
      }
    } catch (Throwable t) {
      throw rethrow(t);
    }
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
    try {
      int rc = (int) H.POLL.invokeExact(Native.callState(), p, fd2 >= 0 ? 2L : 1L, timeoutMillis);
      if (rc < 0 && Native.lastErrno() != NativeCallException.EINTR) {
        throw failure("poll");
      }
      return rc > 0;
    } catch (Throwable t) {
      throw rethrow(t);
    }
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
