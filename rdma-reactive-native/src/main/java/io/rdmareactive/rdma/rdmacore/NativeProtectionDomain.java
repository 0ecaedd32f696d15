package io.rdmareactive.rdma.rdmacore;

import io.rdmareactive.rdma.spi.AbstractProtectionDomain;
import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.MemoryWindow;
import io.rdmareactive.rdma.verbs.ParentDomain;
import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.QueuePairOptions;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.SharedReceiveQueue;
import io.rdmareactive.rdma.verbs.SharedReceiveQueueOptions;
import io.rdmareactive.rdma.verbs.ThreadDomain;
import java.lang.foreign.MemorySegment;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/** A protection domain (ibv_alloc_pd); also the base of {@link NativeParentDomain}. */
class NativeProtectionDomain extends AbstractProtectionDomain implements NativeContextBound {
  final NativeContext context;
  final MemorySegment pd;
  /** Whether closing this closes its context too (a PD shared by endpoints, on a borrowed device context). */
  private final boolean ownsContext;

  NativeProtectionDomain(NativeContext context, @Nullable AbstractRdmaResource parent, MemorySegment pd,
      String description) {
    super(description, parent);
    this.context = context;
    this.pd = pd;
    this.ownsContext = parent == null;
  }

  /**
   * A PD on {@code borrowed}, librdmacm's context of a device (which its CM ids' QPs are on), that
   * the endpoints on that device may share; closing it closes the borrowed context, after it.
   */
  static NativeProtectionDomain onDeviceContext(NativeContext borrowed) {
    try {
      borrowed.ensureOpen();
      MemorySegment pd = Native.created("ibv_alloc_pd", Ibverbs.allocPd(borrowed.ctx));
      try {
        // No lease on its context: it closes the context itself, after it.
        return new NativeProtectionDomain(borrowed, null, pd, "ProtectionDomain[" + borrowed.deviceName() + ", shared]");
      } catch (RuntimeException | Error e) {
        Ibverbs.deallocPd(pd);
        throw e;
      }
    } catch (RuntimeException | Error e) {
      borrowed.close();
      throw e;
    }
  }

  @Override
  public NativeContext nativeContext() {
    return context;
  }

  @Override
  public RdmaContext context() {
    return context;
  }

  @Override
  protected MemoryRegion register(MemorySegment segment, Set<Access> access) {
    int mask = Access.mask(access);
    MemorySegment mr = Native.created("ibv_reg_mr", Ibverbs.regMr(pd, segment, segment.byteSize(), mask));
    try {
      return new NativeMemoryRegion(this, mr, segment, access);
    } catch (RuntimeException | Error e) {
      Ibverbs.deregMr(mr);
      throw e;
    }
  }

  @Override
  protected MemoryWindow newMemoryWindow() {
    return NativeMemoryWindow.allocate(this);
  }

  @Override
  protected QueuePair newQueuePair(QueuePairOptions options) {
    return QueuePairFactory.create(this, options);
  }

  @Override
  protected SharedReceiveQueue newSharedReceiveQueue(SharedReceiveQueueOptions options) {
    return NativeSharedReceiveQueue.create(this, options);
  }

  @Override
  protected ParentDomain newParentDomain(ThreadDomain threadDomain) {
    if (!(threadDomain instanceof NativeThreadDomain td)) {
      throw new IllegalArgumentException("thread domain " + threadDomain + " is not a native one");
    }
    return NativeParentDomain.allocate(this, td);
  }

  @Override
  protected void release() {
    Native.checkReturn(closeFunction(), Ibverbs.deallocPd(pd));
    if (ownsContext) {
      context.close();
    }
  }

  @Override
  protected String closeFunction() {
    return "ibv_dealloc_pd";
  }
}
