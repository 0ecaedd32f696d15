package io.rdmareactive.rdma.nativ;

import io.rdmareactive.rdma.internal.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ParentDomain;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.QueuePairOptions;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.SharedReceiveQueue;
import io.rdmareactive.rdma.verbs.SharedReceiveQueueOptions;
import io.rdmareactive.rdma.verbs.ThreadDomain;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Set;

/** A protection domain (ibv_alloc_pd); also the base of {@link NativeParentDomain}. */
class NativeProtectionDomain extends AbstractRdmaResource implements ProtectionDomain, NativeContextBound {
  final NativeContext context;
  final MemorySegment pd;

  NativeProtectionDomain(NativeContext context, AbstractRdmaResource parent, MemorySegment pd, String description) {
    super(description, parent);
    this.context = context;
    this.pd = pd;
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
  public MemoryRegion registerMemory(MemorySegment segment, Set<Access> access) {
    ensureOpen();
    if (!segment.isNative()) {
      throw new IllegalArgumentException("only native memory can be registered (heap segments move with the GC); "
          + "allocate it from an Arena, got " + segment);
    }
    if (!segment.scope().isAlive()) {
      throw new IllegalArgumentException("the segment's arena is already closed: " + segment);
    }
    int mask = Access.mask(access);
    MemorySegment mr = Native.created("ibv_reg_mr", Ibverbs.regMr(pd, segment, segment.byteSize(), mask));
    try {
      return new NativeMemoryRegion(this, mr, segment, access.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(access)));
    } catch (RuntimeException | Error e) {
      Ibverbs.deregMr(mr);
      throw e;
    }
  }

  @Override
  public QueuePair createQueuePair(QueuePairOptions options) {
    ensureOpen();
    return QueuePairFactory.create(this, options);
  }

  @Override
  public SharedReceiveQueue createSharedReceiveQueue(SharedReceiveQueueOptions options) {
    ensureOpen();
    return NativeSharedReceiveQueue.create(this, options);
  }

  @Override
  public ParentDomain allocateParentDomain(ThreadDomain threadDomain) {
    if (!(threadDomain instanceof NativeThreadDomain td)) {
      throw new IllegalArgumentException("thread domain " + threadDomain + " is not a native one");
    }
    return NativeParentDomain.allocate(this, td);
  }

  @Override
  protected void release() {
    Native.checkReturn(closeFunction(), Ibverbs.deallocPd(pd));
  }

  @Override
  protected String closeFunction() {
    return "ibv_dealloc_pd";
  }
}
