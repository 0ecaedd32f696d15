package io.rdmareactive.rdma.rdmacore;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * The static inline verbs of verbs.h, called as the inline functions do: through the function
 * pointer read from the context ({@code ibv_context.ops} for post/poll/notify and memory windows,
 * {@code struct verbs_context} for the extended verbs), with an address-less handle per signature
 * and call kind (critical or not) and {@code invokeExact} through a typed method. Nothing here is
 * bound by name: the exported functions are {@link Ibverbs}'s. Methods return what C returns, as
 * {@link Ibverbs}'s do.
 */
final class InlineVerbs {
  /*
   * Posting and polling run per message: no errno capture, and a critical call (no thread-state
   * transition) where the JDK's condition holds, that the function is "extremely short in all
   * cases", since a critical call holds off safepoints, and so every other thread's GC, while it
   * runs. poll_cq and post_recv stay in user space on every provider (rxe and siw included: their
   * queues are mapped memory), so they are always critical. post_send and req_notify_cq are a
   * doorbell write on hardware (mlx5 and the like) but a system call on the kernel-emulated
   * providers: rxe's post_send is a write() after which the kernel may segment and checksum up to
   * 64 KiB inline, siw's is a write() too, and req_notify_cq is ibv_cmd_req_notify_cq on both. So
   * those two are chosen per call, by the context's provider (NativeContext#postsInKernel).
   */
  private static final Linker.Option HOT = Linker.Option.critical(false);

  /** ops.poll_cq: int (struct ibv_cq *, int, struct ibv_wc *). */
  private static final MethodHandle POLL_CQ = Native.pointerCall(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS), false, HOT);
  /** ops.req_notify_cq: int (struct ibv_cq *, int solicited_only). */
  private static final MethodHandle REQ_NOTIFY_CQ = Native.pointerCall(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), false, HOT);
  /** The same, as an ordinary downcall: on providers where it is a system call. */
  private static final MethodHandle REQ_NOTIFY_CQ_SYSCALL = Native.pointerCall(
      FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), false);
  /** ops.post_send/post_recv/post_srq_recv: int (obj, wr, bad_wr). */
  private static final MethodHandle POST = Native.pointerCall(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), false, HOT);
  /** ops.post_send as an ordinary downcall: on providers where it is a system call. */
  private static final MethodHandle POST_SYSCALL = Native.pointerCall(
      FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), false);
  /** ops.alloc_mw: struct ibv_mw * (struct ibv_pd *, enum ibv_mw_type), NULL + errno on failure. */
  private static final MethodHandle ALLOC_MW = Native.pointerCall(FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT), true);
  /** verbs_context.query_port: errno (ctx, uint8 port, attr, size_t len). */
  private static final MethodHandle VCTX_QUERY_PORT = Native.pointerCall(
      FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS, JAVA_LONG), false);
  /** Extended verbs creating an object, NULL + errno on failure: (ctx, attr) -> obj. */
  private static final MethodHandle VCTX_CREATE = Native.pointerCall(FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS), true);
  /** Destroying an object, ops.dealloc_mw and the extended verbs alike: (obj) -> errno. */
  private static final MethodHandle VCTX_DESTROY = Native.pointerCall(FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
  /** verbs_context.get_srq_num: (srq, uint32_t *out) -> errno. */
  private static final MethodHandle VCTX_GET_SRQ_NUM = Native.pointerCall(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), true);

  private InlineVerbs() {}

  /** Builds the handles now (this class's initialisation), where a device is opened ({@link Ibverbs#check}). */
  static void bind() {
    // nothing more: calling this initialises the class, and with it every handle above
  }

  /** ibv_poll_cq: completions written to {@code wcs} (up to {@code max}), or a negative value. */
  static int pollCq(MemorySegment fn, MemorySegment cq, int max, MemorySegment wcs) {
    try {
      return (int) POLL_CQ.invokeExact(fn, cq, max, wcs);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /** ops.req_notify_cq; {@code inKernel}: the provider makes it a system call (not a critical call then). */
  static int reqNotifyCq(MemorySegment fn, MemorySegment cq, int solicitedOnly, boolean inKernel) {
    try {
      return inKernel ? (int) REQ_NOTIFY_CQ_SYSCALL.invokeExact(fn, cq, solicitedOnly)
          : (int) REQ_NOTIFY_CQ.invokeExact(fn, cq, solicitedOnly);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /**
   * ops.post_send: 0 or an errno value; {@code inKernel}: the provider makes it a system call (not
   * a critical call then).
   */
  static int postSend(MemorySegment fn, MemorySegment qp, MemorySegment wr, MemorySegment badWr, boolean inKernel) {
    try {
      return inKernel ? (int) POST_SYSCALL.invokeExact(fn, qp, wr, badWr) : (int) POST.invokeExact(fn, qp, wr, badWr);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /** ibv_post_recv or ibv_post_srq_recv (by {@code fn}), user space on every provider: 0 or an errno value. */
  static int post(MemorySegment fn, MemorySegment object, MemorySegment wr, MemorySegment badWr) {
    try {
      return (int) POST.invokeExact(fn, object, wr, badWr);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /** ibv_alloc_mw through ops.alloc_mw ({@code fn}, non-null): NULL + errno on failure. */
  static MemorySegment allocMw(MemorySegment fn, MemorySegment pd, int type) {
    try {
      return (MemorySegment) ALLOC_MW.invokeExact(fn, Native.callState(), pd, type);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /** ibv_dealloc_mw through ops.dealloc_mw ({@code fn}): 0 or an errno value. */
  static int deallocMw(MemorySegment fn, MemorySegment mw) {
    return destroyExtended(fn, mw); // the same C signature: int (struct ibv_mw *)
  }

  /** ibv_query_port through verbs_context.query_port ({@code fn}): 0 or an errno value. */
  static int queryPortExtended(MemorySegment fn, MemorySegment ctx, byte port, MemorySegment attr, long length) {
    try {
      return (int) VCTX_QUERY_PORT.invokeExact(fn, ctx, port, attr, length);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /** An extended create (open_xrcd, alloc_td, create_srq_ex, create_qp_ex, open_qp, ...): NULL + errno on failure. */
  static MemorySegment createExtended(MemorySegment fn, MemorySegment ctx, MemorySegment attr) {
    try {
      return (MemorySegment) VCTX_CREATE.invokeExact(fn, Native.callState(), ctx, attr);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /** An extended destroy (close_xrcd, dealloc_td, ...): 0 or an errno value. */
  static int destroyExtended(MemorySegment fn, MemorySegment object) {
    try {
      return (int) VCTX_DESTROY.invokeExact(fn, Native.callState(), object);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  /** ibv_get_srq_num through verbs_context.get_srq_num ({@code fn}): 0 or an errno value. */
  static int getSrqNum(MemorySegment fn, MemorySegment srq, MemorySegment numOut) {
    try {
      return (int) VCTX_GET_SRQ_NUM.invokeExact(fn, Native.callState(), srq, numOut);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }
}
