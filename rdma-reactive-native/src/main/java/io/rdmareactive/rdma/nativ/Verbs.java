package io.rdmareactive.rdma.nativ;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import org.jspecify.annotations.Nullable;

/**
 * libibverbs downcalls. Exported functions are bound by symbol; the static inline verbs of
 * verbs.h (post/poll/notify through {@code ibv_context.ops}, extended verbs through
 * {@code struct verbs_context}) are address-less handles invoked with the function pointer read
 * from the context, exactly as the inline functions do. Handles marked "errno" take
 * {@link Native#callState()} right after the function pointer (or first, for symbols).
 */
final class Verbs {
  static final String LIBRARY = "libibverbs.so.1";

  // --- function-pointer calls (address-less; first argument is the pointer) ---
  private static final Linker.Option CAPTURE = Linker.Option.captureCallState("errno");
  private static final Linker.Option HOT = Linker.Option.critical(false);

  /** int poll_cq(struct ibv_cq *, int, struct ibv_wc *). */
  static final MethodHandle POLL_CQ = Native.pointerCall(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS), HOT);
  /** int req_notify_cq(struct ibv_cq *, int solicited_only). */
  static final MethodHandle REQ_NOTIFY_CQ = Native.pointerCall(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), HOT);
  /** int post_send/post_recv/post_srq_recv(obj, wr, bad_wr). */
  static final MethodHandle POST = Native.pointerCall(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), HOT);
  /** verbs_context.query_port(ctx, uint8 port, attr, size_t len), returns errno. */
  static final MethodHandle VCTX_QUERY_PORT = Native.pointerCall(
      FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS, JAVA_LONG));
  /** Extended verbs returning an object, NULL + errno on failure: (ctx, attr) -> obj (errno). */
  static final MethodHandle VCTX_CREATE = Native.pointerCall(FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS), CAPTURE);
  /** Extended verbs destroying an object, returning errno: (obj) -> int (errno). */
  static final MethodHandle VCTX_DESTROY = Native.pointerCall(FunctionDescriptor.of(JAVA_INT, ADDRESS), CAPTURE);
  /** get_srq_num(srq, uint32_t *out) (errno). */
  static final MethodHandle VCTX_GET_SRQ_NUM = Native.pointerCall(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), CAPTURE);

  // --- exported symbols ---
  final MethodHandle getDeviceList;   // (cs, int *num) -> ibv_device **
  final MethodHandle freeDeviceList;  // (list)
  final MethodHandle getDeviceName;   // (dev) -> char *
  final MethodHandle getDeviceGuid;   // (dev) -> __be64
  final MethodHandle openDevice;      // (cs, dev) -> ctx
  final MethodHandle closeDevice;     // (cs, ctx) -> int
  final MethodHandle queryDevice;     // (cs, ctx, attr) -> int
  final MethodHandle queryPort;       // (cs, ctx, uint8, compat attr) -> int
  final MethodHandle queryGid;        // (cs, ctx, uint8, int, gid) -> int
  final MethodHandle allocPd;         // (cs, ctx) -> pd
  final MethodHandle deallocPd;       // (cs, pd) -> int
  final MethodHandle regMr;           // (cs, pd, addr, size_t, int) -> mr
  final MethodHandle deregMr;         // (cs, mr) -> int
  final MethodHandle createCompChannel;  // (cs, ctx) -> channel
  final MethodHandle destroyCompChannel; // (cs, channel) -> int
  final MethodHandle createCq;        // (cs, ctx, int cqe, void *cq_context, channel, int vector) -> cq
  final MethodHandle destroyCq;       // (cs, cq) -> int
  final MethodHandle getCqEvent;      // (cs, channel, cq **, void **) -> int
  final MethodHandle ackCqEvents;     // (cq, unsigned)
  final MethodHandle createQp;        // (cs, pd, init_attr) -> qp
  final MethodHandle modifyQp;        // (cs, qp, attr, int mask) -> int
  final MethodHandle queryQp;         // (cs, qp, attr, int mask, init_attr) -> int
  final MethodHandle destroyQp;       // (cs, qp) -> int
  final MethodHandle createSrq;       // (cs, pd, init_attr) -> srq
  final MethodHandle destroySrq;      // (cs, srq) -> int
  final MethodHandle getAsyncEvent;   // (cs, ctx, event) -> int
  final MethodHandle ackAsyncEvent;   // (event)

  private static volatile @Nullable Object loaded; // Verbs, or the RuntimeException that loading threw

  private Verbs(SymbolLookup lib) {
    getDeviceList = Native.downcall(lib, "ibv_get_device_list", FunctionDescriptor.of(ADDRESS, ADDRESS), true);
    freeDeviceList = Native.downcall(lib, "ibv_free_device_list", FunctionDescriptor.ofVoid(ADDRESS), false);
    getDeviceName = Native.downcall(lib, "ibv_get_device_name", FunctionDescriptor.of(ADDRESS, ADDRESS), false);
    getDeviceGuid = Native.downcall(lib, "ibv_get_device_guid", FunctionDescriptor.of(JAVA_LONG, ADDRESS), false);
    openDevice = Native.downcall(lib, "ibv_open_device", FunctionDescriptor.of(ADDRESS, ADDRESS), true);
    closeDevice = Native.downcall(lib, "ibv_close_device", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
    queryDevice = Native.downcall(lib, "ibv_query_device", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), true);
    queryPort = Native.downcall(lib, "ibv_query_port",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS), true);
    queryGid = Native.downcall(lib, "ibv_query_gid",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, JAVA_INT, ADDRESS), true);
    allocPd = Native.downcall(lib, "ibv_alloc_pd", FunctionDescriptor.of(ADDRESS, ADDRESS), true);
    deallocPd = Native.downcall(lib, "ibv_dealloc_pd", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
    regMr = Native.downcall(lib, "ibv_reg_mr",
        FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT), true);
    deregMr = Native.downcall(lib, "ibv_dereg_mr", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
    createCompChannel = Native.downcall(lib, "ibv_create_comp_channel", FunctionDescriptor.of(ADDRESS, ADDRESS), true);
    destroyCompChannel = Native.downcall(lib, "ibv_destroy_comp_channel",
        FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
    createCq = Native.downcall(lib, "ibv_create_cq",
        FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), true);
    destroyCq = Native.downcall(lib, "ibv_destroy_cq", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
    getCqEvent = Native.downcall(lib, "ibv_get_cq_event",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), true);
    ackCqEvents = Native.downcall(lib, "ibv_ack_cq_events", FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT), false);
    createQp = Native.downcall(lib, "ibv_create_qp", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS), true);
    modifyQp = Native.downcall(lib, "ibv_modify_qp",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), true);
    queryQp = Native.downcall(lib, "ibv_query_qp",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS), true);
    destroyQp = Native.downcall(lib, "ibv_destroy_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
    createSrq = Native.downcall(lib, "ibv_create_srq", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS), true);
    destroySrq = Native.downcall(lib, "ibv_destroy_srq", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
    getAsyncEvent = Native.downcall(lib, "ibv_get_async_event",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), true);
    ackAsyncEvent = Native.downcall(lib, "ibv_ack_async_event", FunctionDescriptor.ofVoid(ADDRESS), false);
  }

  /** The bound library, or {@link NativeLibraryUnavailableException} (remembered: loading is tried once). */
  static Verbs get() {
    Object l = loaded;
    if (l == null) {
      synchronized (Verbs.class) {
        if ((l = loaded) == null) {
          try {
            l = new Verbs(Native.load(LIBRARY));
          } catch (RuntimeException | LinkageError e) {
            l = e instanceof NativeLibraryUnavailableException u ? u
                : new NativeLibraryUnavailableException(LIBRARY, e);
          }
          loaded = l;
        }
      }
    }
    if (l instanceof Verbs v) {
      return v;
    }
    throw (RuntimeException) l;
  }

  /** Whether the library and every symbol loaded. Never throws. */
  static boolean isLoadable() {
    try {
      get();
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }
}
