package io.rdmareactive.rdma.rdmacore;

import static io.rdmareactive.rdma.rdmacore.VerbsLayout.*;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.AsyncEvent;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.CompletionQueueOptions;
import io.rdmareactive.rdma.verbs.DeviceAttributes;
import io.rdmareactive.rdma.verbs.PortAttributes;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.ThreadDomain;
import io.rdmareactive.rdma.verbs.XrcDomain;
import io.rdmareactive.rdma.verbs.XrcDomainOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;

/** An opened device (ibv_open_device): owns the ops-table pointers the fast paths call through. */
final class NativeContext extends AbstractRdmaResource implements RdmaContext {
  private static final long ABI_IS_EXTENDED = -1L; // (void *) UINTPTR_MAX
  static final int IBV_DEVICE_XRC = 1 << 20;

  final MemorySegment ctx;
  /** struct verbs_context around ctx, or null for a provider without the extended ABI. */
  private final @Nullable MemorySegment vctx;
  private final long vctxSize;
  private final String deviceName;
  /** For a borrowed context: what gives the owner's hold back (see RdmaCm#deviceContext). */
  private @Nullable Runnable afterRelease;
  // ibv_context.ops entries, read once: the static inline verbs call exactly these.
  final MemorySegment pollCqFn;
  final MemorySegment reqNotifyCqFn;
  final MemorySegment postSendFn;
  final MemorySegment postRecvFn;
  final MemorySegment postSrqRecvFn;
  /** ops.alloc_mw and ops.dealloc_mw: NULL on a provider without memory windows. */
  final MemorySegment allocMwFn;
  final MemorySegment deallocMwFn;
  final int numCompVectors;

  /**
   * cq_context ids handed to ibv_create_cq, so ibv_get_cq_event's cq_context finds the Java CQ.
   * Process-wide, not per wrapper: a channel shared by a transport loop serves CQs created through
   * other wrappers (each endpoint borrows librdmacm's context anew).
   */
  private static final ConcurrentHashMap<Long, NativeCompletionQueue> CQS_BY_ID = new ConcurrentHashMap<>();
  private static final AtomicLong NEXT_CQ_ID = new AtomicLong(1);

  /** Read on a thread of its own for an opened device; none for a borrowed context: its async fd is its owner's. */
  private final AsyncEventThread asyncEvents;
  /** Whether closing this closes the device (false: borrowed, e.g. librdmacm's id->verbs). */
  private final boolean owned;

  private NativeContext(MemorySegment rawCtx, String deviceName) {
    this(rawCtx, deviceName, true);
  }

  private NativeContext(MemorySegment rawCtx, String deviceName, boolean owned) {
    super("RdmaContext[" + deviceName + (owned ? "" : ", borrowed") + "]", null);
    this.owned = owned;
    this.deviceName = deviceName;
    this.ctx = rawCtx.reinterpret(SIZEOF_CONTEXT);
    if (ctx.get(JAVA_LONG, CONTEXT_ABI_COMPAT) == ABI_IS_EXTENDED) {
      // verbs_get_ctx: the verbs_context ends with the ibv_context, so it starts this far before it.
      vctx = MemorySegment.ofAddress(ctx.address() - VERBS_CONTEXT_CONTEXT).reinterpret(SIZEOF_VERBS_CONTEXT);
      vctxSize = vctx.get(JAVA_LONG, VERBS_CONTEXT_SZ);
    } else {
      vctx = null;
      vctxSize = 0;
    }
    pollCqFn = ctx.get(ADDRESS, CONTEXT_OPS_POLL_CQ);
    reqNotifyCqFn = ctx.get(ADDRESS, CONTEXT_OPS_REQ_NOTIFY_CQ);
    postSendFn = ctx.get(ADDRESS, CONTEXT_OPS_POST_SEND);
    postRecvFn = ctx.get(ADDRESS, CONTEXT_OPS_POST_RECV);
    postSrqRecvFn = ctx.get(ADDRESS, CONTEXT_OPS_POST_SRQ_RECV);
    allocMwFn = ctx.get(ADDRESS, CONTEXT_OPS_ALLOC_MW);
    deallocMwFn = ctx.get(ADDRESS, CONTEXT_OPS_DEALLOC_MW);
    numCompVectors = ctx.get(JAVA_INT, CONTEXT_NUM_COMP_VECTORS);
    asyncEvents = owned ? AsyncEventThread.start(ctx) : AsyncEventThread.none();
  }

  /** Opens {@code device} (an ibv_device pointer); the caller frees the device list afterwards. */
  static NativeContext open(MemorySegment device, String name) {
    MemorySegment c = Native.created("ibv_open_device", Ibverbs.openDevice(device));
    try {
      return new NativeContext(c, name);
    } catch (RuntimeException | Error e) {
      Ibverbs.closeDevice(c);
      throw e;
    }
  }

  /**
   * Wraps {@code rawCtx}, an ibv_context someone else opened and keeps open (librdmacm's
   * id->verbs), for verbs objects on it. Closing the wrapper frees nothing native; it reports no
   * async events (the owner's async fd is left alone).
   */
  static NativeContext borrow(MemorySegment rawCtx) {
    return borrow(rawCtx, null);
  }

  /** The name of the device of {@code rawCtx} (an ibv_context*). */
  static String deviceNameOf(MemorySegment rawCtx) {
    MemorySegment device = rawCtx.reinterpret(SIZEOF_CONTEXT).get(ADDRESS, 0); // struct ibv_context.device
    MemorySegment name = Ibverbs.getDeviceName(device);
    return name.address() == 0 ? "?" : name.reinterpret(256).getString(0);
  }

  /** {@link #borrow(MemorySegment)}, running {@code afterRelease} once the wrapper is closed. */
  static NativeContext borrow(MemorySegment rawCtx, @Nullable Runnable afterRelease) {
    MemorySegment c = rawCtx.reinterpret(SIZEOF_CONTEXT);
    NativeContext borrowed = new NativeContext(c, deviceNameOf(c), false);
    borrowed.afterRelease = afterRelease;
    return borrowed;
  }

  /**
   * The extended op at {@code offset} of struct verbs_context, as verbs_get_ctx_op finds it: only
   * when the context is extended, its {@code sz} covers the op (the struct grows towards lower
   * addresses, so an op exists when sz >= sizeof(verbs_context) - offsetof(op)) and the pointer is set.
   */
  MemorySegment extendedOp(long offset, String function) {
    ensureOpen();
    MemorySegment v = vctx;
    if (v != null && vctxSize >= SIZEOF_VERBS_CONTEXT - offset) {
      MemorySegment fn = v.get(ADDRESS, offset);
      if (fn.address() != 0) {
        return fn;
      }
    }
    throw Native.failure(function, NativeCallException.EOPNOTSUPP,
        deviceName + "'s driver does not provide " + function);
  }

  @Nullable MemorySegment extendedOpOrNull(long offset) {
    MemorySegment v = vctx;
    if (v != null && vctxSize >= SIZEOF_VERBS_CONTEXT - offset) {
      MemorySegment fn = v.get(ADDRESS, offset);
      return fn.address() != 0 ? fn : null;
    }
    return null;
  }

  /** Vendor ids of the kernel-emulated providers: rxe (RXE_VENDOR_ID) and siw (SIW_VENDOR_ID, "bmt"). */
  private static final int RXE_VENDOR_ID = 0xFFFFFF;
  private static final int SIW_VENDOR_ID = 0x626d74;
  /** Per device name, whether post_send and req_notify_cq are system calls there; asked once. */
  private static final ConcurrentHashMap<String, Boolean> POSTS_IN_KERNEL = new ConcurrentHashMap<>();
  private volatile int postsInKernel = -1;

  /**
   * Whether this device's provider does its post_send and req_notify_cq in the kernel (rxe, siw:
   * a system call each), so that they must not be critical downcalls (see {@link InlineVerbs}).
   * Told by the vendor id ibv_query_device reports, once per device in this process; a device
   * that cannot be queried counts as one that posts in the kernel, the safe side.
   */
  boolean postsInKernel() {
    int known = postsInKernel;
    if (known < 0) {
      known = POSTS_IN_KERNEL.computeIfAbsent(deviceName, n -> {
        try {
          int vendor = queryDevice().vendorId();
          return vendor == RXE_VENDOR_ID || vendor == SIW_VENDOR_ID;
        } catch (RuntimeException e) {
          return true;
        }
      }) ? 1 : 0;
      postsInKernel = known;
    }
    return known == 1;
  }

  @Override
  public String deviceName() {
    return deviceName;
  }

  @Override
  public String providerName() {
    return NativeProvider.NAME;
  }

  @Override
  public DeviceAttributes queryDevice() {
    ensureOpen();
    try (Arena a = Arena.ofConfined()) {
      MemorySegment attr = a.allocate(SIZEOF_DEVICE_ATTR, 8);
      Native.checkReturn("ibv_query_device", Ibverbs.queryDevice(ctx, attr));
      long caps = Integer.toUnsignedLong(attr.get(JAVA_INT, DEVICE_ATTR_DEVICE_CAP_FLAGS));
      return new DeviceAttributes(
          attr.asSlice(DEVICE_ATTR_FW_VER, 64).getString(0),
          Long.reverseBytes(attr.get(JAVA_LONG, DEVICE_ATTR_NODE_GUID)),
          attr.get(JAVA_INT, DEVICE_ATTR_VENDOR_ID),
          attr.get(JAVA_INT, DEVICE_ATTR_VENDOR_PART_ID),
          Byte.toUnsignedInt(attr.get(JAVA_BYTE, DEVICE_ATTR_PHYS_PORT_CNT)),
          attr.get(JAVA_INT, DEVICE_ATTR_MAX_QP),
          attr.get(JAVA_INT, DEVICE_ATTR_MAX_QP_WR),
          attr.get(JAVA_INT, DEVICE_ATTR_MAX_SGE),
          attr.get(JAVA_INT, DEVICE_ATTR_MAX_CQ),
          attr.get(JAVA_INT, DEVICE_ATTR_MAX_CQE),
          attr.get(JAVA_INT, DEVICE_ATTR_MAX_MR),
          attr.get(JAVA_LONG, DEVICE_ATTR_MAX_MR_SIZE),
          attr.get(JAVA_INT, DEVICE_ATTR_MAX_PD),
          attr.get(JAVA_INT, DEVICE_ATTR_MAX_SRQ),
          attr.get(JAVA_INT, DEVICE_ATTR_MAX_SRQ_WR),
          caps,
          (caps & IBV_DEVICE_XRC) != 0);
    }
  }

  @Override
  public PortAttributes queryPort(int portNumber) {
    ensureOpen();
    checkPort(portNumber);
    try (Arena a = Arena.ofConfined()) {
      MemorySegment attr = a.allocate(SIZEOF_PORT_ATTR, 8); // zeroed, as ___ibv_query_port's memset
      // ibv_query_port is a macro over ___ibv_query_port: the verbs_context op when present, else the
      // exported compat symbol.
      MemorySegment op = extendedOpOrNull(VERBS_CONTEXT_QUERY_PORT);
      int rc = op != null
          ? InlineVerbs.queryPortExtended(op, ctx, (byte) portNumber, attr, SIZEOF_PORT_ATTR)
          : Ibverbs.queryPort(ctx, (byte) portNumber, attr);
      Native.checkReturn("ibv_query_port", rc);
      return new PortAttributes(
          PortAttributes.PortState.of(attr.get(JAVA_INT, PORT_ATTR_STATE)),
          attr.get(JAVA_INT, PORT_ATTR_MAX_MTU),
          attr.get(JAVA_INT, PORT_ATTR_ACTIVE_MTU),
          Short.toUnsignedInt(attr.get(JAVA_SHORT, PORT_ATTR_LID)),
          attr.get(JAVA_INT, PORT_ATTR_GID_TBL_LEN),
          PortAttributes.LinkLayer.of(Byte.toUnsignedInt(attr.get(JAVA_BYTE, PORT_ATTR_LINK_LAYER))));
    }
  }

  @Override
  public byte[] queryGid(int portNumber, int index) {
    ensureOpen();
    checkPort(portNumber);
    if (index < 0) {
      throw new IllegalArgumentException("GID index must be >= 0, was " + index);
    }
    try (Arena a = Arena.ofConfined()) {
      MemorySegment gid = a.allocate(SIZEOF_GID, 8);
      int rc = Ibverbs.queryGid(ctx, (byte) portNumber, index, gid);
      if (rc != 0) {
        throw Native.failure("ibv_query_gid", Native.errnoOf(rc),
            "port " + portNumber + " GID index " + index + " of " + deviceName);
      }
      return gid.toArray(JAVA_BYTE);
    }
  }

  private static void checkPort(int portNumber) {
    if (portNumber < 1 || portNumber > 255) {
      throw new IllegalArgumentException("port numbers start at 1 and fit in a byte, was " + portNumber);
    }
  }

  @Override
  public ProtectionDomain allocateProtectionDomain() {
    ensureOpen();
    MemorySegment pd = Native.created("ibv_alloc_pd", Ibverbs.allocPd(ctx));
    try {
      return new NativeProtectionDomain(this, this, pd, "ProtectionDomain[" + deviceName + "]");
    } catch (RuntimeException | Error e) {
      Ibverbs.deallocPd(pd);
      throw e;
    }
  }

  @Override
  public ThreadDomain allocateThreadDomain() {
    return NativeThreadDomain.allocate(this);
  }

  @Override
  public XrcDomain openXrcDomain(XrcDomainOptions options) {
    return NativeXrcDomain.open(this, options);
  }

  @Override
  public CompletionChannel createCompletionChannel() {
    return NativeCompletionChannel.create(this);
  }

  @Override
  public CompletionQueue createCompletionQueue(CompletionQueueOptions options) {
    return NativeCompletionQueue.create(this, options);
  }

  @Override
  public Flux<AsyncEvent> asyncEvents() {
    return asyncEvents.events();
  }


  long reserveCqId() {
    return NEXT_CQ_ID.getAndIncrement();
  }

  void bindCq(long id, NativeCompletionQueue cq) {
    CQS_BY_ID.put(id, cq);
  }

  void unregisterCq(long id) {
    CQS_BY_ID.remove(id);
  }

  @Nullable NativeCompletionQueue cqById(long id) {
    return CQS_BY_ID.get(id);
  }

  /** Checks that {@code r} belongs to this context (objects of other contexts or providers are rejected). */
  void checkOwn(NativeContextBound r, String what) {
    // Wrappers of one ibv_context (librdmacm's, borrowed per endpoint) are the same context.
    if (r.nativeContext() != this && r.nativeContext().ctx.address() != ctx.address()) {
      throw new IllegalArgumentException(what + " belongs to another device context than " + deviceName);
    }
  }

  @Override
  protected void release() {
    if (!owned) {
      asyncEvents.complete();
      if (afterRelease != null) {
        afterRelease.run();
      }
      return;
    }
    asyncEvents.stop(deviceName);
    int rc = Ibverbs.closeDevice(ctx);
    if (rc != 0) {
      throw Native.failure("ibv_close_device", Native.errnoOf(rc), deviceName);
    }
    asyncEvents.complete();
  }

  @Override
  protected String closeFunction() {
    return "ibv_close_device";
  }
}
