package io.rdmareactive.rdma.rdmacore;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * The libibverbs binding: each exported function bound once, each called with {@code invokeExact}
 * through a typed method. The static inline verbs of verbs.h (post/poll/notify through {@code
 * ibv_context.ops}, extended verbs through {@code struct verbs_context}) are no symbols to bind:
 * {@link InlineVerbs} calls them through the function pointers read from the context. Methods
 * return what C returns (NULL, -1 or an errno value); the errno of NULL/-1 results is in {@link
 * Native#lastErrno()} until this thread's next call ({@link Native#created}, {@link
 * Native#errnoOf}).
 */
final class Ibverbs {
  static final String LIBRARY = "libibverbs.so.1";
  private static final Native.Library LIB = Native.library(LIBRARY);
  private static final MethodHandle GET_DEVICE_LIST = LIB.bind("ibv_get_device_list", FunctionDescriptor.of(ADDRESS, ADDRESS), true);
  private static final MethodHandle FREE_DEVICE_LIST = LIB.bind("ibv_free_device_list", FunctionDescriptor.ofVoid(ADDRESS), false);
  private static final MethodHandle GET_DEVICE_NAME = LIB.bind("ibv_get_device_name", FunctionDescriptor.of(ADDRESS, ADDRESS), false);
  private static final MethodHandle GET_DEVICE_GUID = LIB.bind("ibv_get_device_guid", FunctionDescriptor.of(JAVA_LONG, ADDRESS), false);
  private static final MethodHandle OPEN_DEVICE = LIB.bind("ibv_open_device", FunctionDescriptor.of(ADDRESS, ADDRESS), true);
  private static final MethodHandle CLOSE_DEVICE = LIB.bind("ibv_close_device", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
  private static final MethodHandle QUERY_DEVICE = LIB.bind("ibv_query_device", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), true);
  private static final MethodHandle QUERY_PORT = LIB.bind("ibv_query_port",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS), true);
  private static final MethodHandle QUERY_GID = LIB.bind("ibv_query_gid",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, JAVA_INT, ADDRESS), true);
  private static final MethodHandle ALLOC_PD = LIB.bind("ibv_alloc_pd", FunctionDescriptor.of(ADDRESS, ADDRESS), true);
  private static final MethodHandle DEALLOC_PD = LIB.bind("ibv_dealloc_pd", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
  private static final MethodHandle REG_MR = LIB.bind("ibv_reg_mr",
      FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT), true);
  private static final MethodHandle DEREG_MR = LIB.bind("ibv_dereg_mr", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
  private static final MethodHandle CREATE_COMP_CHANNEL = LIB.bind("ibv_create_comp_channel",
      FunctionDescriptor.of(ADDRESS, ADDRESS), true);
  private static final MethodHandle DESTROY_COMP_CHANNEL = LIB.bind("ibv_destroy_comp_channel",
      FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
  private static final MethodHandle CREATE_CQ = LIB.bind("ibv_create_cq",
      FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), true);
  private static final MethodHandle DESTROY_CQ = LIB.bind("ibv_destroy_cq", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
  private static final MethodHandle GET_CQ_EVENT = LIB.bind("ibv_get_cq_event",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), true);
  private static final MethodHandle ACK_CQ_EVENTS = LIB.bind("ibv_ack_cq_events",
      FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT), false);
  private static final MethodHandle CREATE_QP = LIB.bind("ibv_create_qp", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS), true);
  private static final MethodHandle MODIFY_QP = LIB.bind("ibv_modify_qp",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), true);
  private static final MethodHandle QUERY_QP = LIB.bind("ibv_query_qp",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS), true);
  private static final MethodHandle DESTROY_QP = LIB.bind("ibv_destroy_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
  private static final MethodHandle CREATE_SRQ = LIB.bind("ibv_create_srq", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS), true);
  private static final MethodHandle DESTROY_SRQ = LIB.bind("ibv_destroy_srq", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
  private static final MethodHandle GET_ASYNC_EVENT = LIB.bind("ibv_get_async_event",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), true);
  private static final MethodHandle ACK_ASYNC_EVENT = LIB.bind("ibv_ack_async_event", FunctionDescriptor.ofVoid(ADDRESS), false);

  private Ibverbs() {}

  /** Throws {@link NativeLibraryUnavailableException} when libibverbs or one of its symbols is missing. */
  static void check() {
    LIB.check();
    InlineVerbs.bind(); // with the named ones, as before the split: not at a connection's first post
  }

  /** Whether libibverbs and every symbol loaded. Never throws. */
  static boolean isLoadable() {
    try {
      check();
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  static MemorySegment getDeviceList(MemorySegment numOut) {
    try {
      return (MemorySegment) GET_DEVICE_LIST.invokeExact(Native.callState(), numOut);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  static void freeDeviceList(MemorySegment list) {
    try {
      FREE_DEVICE_LIST.invokeExact(list);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  static MemorySegment getDeviceName(MemorySegment device) {
    try {
      return (MemorySegment) GET_DEVICE_NAME.invokeExact(device);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /** The GUID in network byte order, as C returns it. */
  static long getDeviceGuid(MemorySegment device) {
    try {
      return (long) GET_DEVICE_GUID.invokeExact(device);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  static MemorySegment openDevice(MemorySegment device) {
    return create(OPEN_DEVICE, device);
  }

  static int closeDevice(MemorySegment ctx) {
    return status(CLOSE_DEVICE, ctx);
  }

  static int queryDevice(MemorySegment ctx, MemorySegment attr) {
    try {
      return (int) QUERY_DEVICE.invokeExact(Native.callState(), ctx, attr);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  static int queryPort(MemorySegment ctx, byte port, MemorySegment attr) {
    try {
      return (int) QUERY_PORT.invokeExact(Native.callState(), ctx, port, attr);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  static int queryGid(MemorySegment ctx, byte port, int index, MemorySegment gid) {
    try {
      return (int) QUERY_GID.invokeExact(Native.callState(), ctx, port, index, gid);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  static MemorySegment allocPd(MemorySegment ctx) {
    return create(ALLOC_PD, ctx);
  }

  static int deallocPd(MemorySegment pd) {
    return status(DEALLOC_PD, pd);
  }

  static MemorySegment regMr(MemorySegment pd, MemorySegment address, long length, int access) {
    try {
      return (MemorySegment) REG_MR.invokeExact(Native.callState(), pd, address, length, access);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  static int deregMr(MemorySegment mr) {
    return status(DEREG_MR, mr);
  }

  static MemorySegment createCompChannel(MemorySegment ctx) {
    return create(CREATE_COMP_CHANNEL, ctx);
  }

  static int destroyCompChannel(MemorySegment channel) {
    return status(DESTROY_COMP_CHANNEL, channel);
  }

  static MemorySegment createCq(MemorySegment ctx, int cqe, MemorySegment cqContext, MemorySegment channel, int vector) {
    try {
      return (MemorySegment) CREATE_CQ.invokeExact(Native.callState(), ctx, cqe, cqContext, channel, vector);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  static int destroyCq(MemorySegment cq) {
    return status(DESTROY_CQ, cq);
  }

  static int getCqEvent(MemorySegment channel, MemorySegment cqOut, MemorySegment cqContextOut) {
    try {
      return (int) GET_CQ_EVENT.invokeExact(Native.callState(), channel, cqOut, cqContextOut);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  static void ackCqEvents(MemorySegment cq, int count) {
    try {
      ACK_CQ_EVENTS.invokeExact(cq, count);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  static MemorySegment createQp(MemorySegment pd, MemorySegment initAttr) {
    return create(CREATE_QP, pd, initAttr);
  }

  static int modifyQp(MemorySegment qp, MemorySegment attr, int mask) {
    try {
      return (int) MODIFY_QP.invokeExact(Native.callState(), qp, attr, mask);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  static int queryQp(MemorySegment qp, MemorySegment attr, int mask, MemorySegment initAttr) {
    try {
      return (int) QUERY_QP.invokeExact(Native.callState(), qp, attr, mask, initAttr);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  static int destroyQp(MemorySegment qp) {
    return status(DESTROY_QP, qp);
  }

  static MemorySegment createSrq(MemorySegment pd, MemorySegment initAttr) {
    return create(CREATE_SRQ, pd, initAttr);
  }

  static int destroySrq(MemorySegment srq) {
    return status(DESTROY_SRQ, srq);
  }

  static int getAsyncEvent(MemorySegment ctx, MemorySegment event) {
    try {
      return (int) GET_ASYNC_EVENT.invokeExact(Native.callState(), ctx, event);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  static void ackAsyncEvent(MemorySegment event) {
    try {
      ACK_ASYNC_EVENT.invokeExact(event);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  private static MemorySegment create(MethodHandle h, MemorySegment arg) {
    try {
      return (MemorySegment) h.invokeExact(Native.callState(), arg);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  private static MemorySegment create(MethodHandle h, MemorySegment a, MemorySegment b) {
    try {
      return (MemorySegment) h.invokeExact(Native.callState(), a, b);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  private static int status(MethodHandle h, MemorySegment arg) {
    try {
      return (int) h.invokeExact(Native.callState(), arg);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }
}
