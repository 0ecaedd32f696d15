package io.rdmareactive.rdma.inmemory;

import static io.rdmareactive.rdma.NativeCallException.EINVAL;
import static io.rdmareactive.rdma.NativeCallException.EOPNOTSUPP;

import io.rdmareactive.rdma.internal.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ParentDomain;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.QueuePairOptions;
import io.rdmareactive.rdma.verbs.QueuePairType;
import io.rdmareactive.rdma.verbs.SharedReceiveQueue;
import io.rdmareactive.rdma.verbs.SharedReceiveQueueOptions;
import io.rdmareactive.rdma.verbs.ThreadDomain;
import java.lang.foreign.MemorySegment;
import java.util.Set;

class MemProtectionDomain extends AbstractRdmaResource implements ProtectionDomain, MemContext.Owned {
  final MemContext context;
  final Fabric fabric;
  private final String type;

  MemProtectionDomain(MemContext context) {
    this(context, "pd", "in-memory PD #" + context.fabric.nextHandle(), context);
  }

  MemProtectionDomain(MemContext context, String type, String description, AbstractRdmaResource parent) {
    super(description, parent);
    this.context = context;
    this.fabric = context.fabric;
    this.type = type;
    fabric.created(type);
  }

  /** The PD whose objects may use each other's memory; a parent domain's is its PD's. */
  MemProtectionDomain scope() {
    return this;
  }

  @Override
  public MemContext context() {
    return context;
  }

  @Override
  public MemoryRegion registerMemory(MemorySegment segment, Set<Access> access) {
    ensureOpen();
    if (!segment.isNative()) {
      throw new IllegalArgumentException("only native memory can be registered; " + segment + " is on the heap");
    }
    if (segment.byteSize() == 0) {
      throw Fabric.failure("ibv_reg_mr", EINVAL, "cannot register an empty segment");
    }
    if ((access.contains(Access.REMOTE_WRITE) || access.contains(Access.REMOTE_ATOMIC))
        && !access.contains(Access.LOCAL_WRITE)) {
      throw Fabric.failure("ibv_reg_mr", EINVAL, "remote write or atomic access needs LOCAL_WRITE too, was " + access);
    }
    return new MemMemoryRegion(this, segment, access);
  }

  @Override
  public QueuePair createQueuePair(QueuePairOptions options) {
    ensureOpen();
    if (options.type() == QueuePairType.XRC_RECV) {
      throw new IllegalArgumentException("XRC_RECV queue pairs are created by XrcDomain.createReceiveQueuePair()");
    }
    if (options.type() == QueuePairType.UD) {
      throw Fabric.failure("ibv_create_qp", EOPNOTSUPP, "the in-memory provider does not implement UD");
    }
    if (options.type() == QueuePairType.XRC_SEND && !context.device.xrc()) {
      throw Fabric.failure("ibv_create_qp_ex", EOPNOTSUPP, "device " + context.device.name() + " has no XRC");
    }
    return MemQueuePair.create(this, options);
  }

  @Override
  public SharedReceiveQueue createSharedReceiveQueue(SharedReceiveQueueOptions options) {
    ensureOpen();
    return MemSharedReceiveQueue.plain(this, options);
  }

  @Override
  public ParentDomain allocateParentDomain(ThreadDomain threadDomain) {
    ensureOpen();
    if (!context.device.threadDomains()) {
      throw Fabric.failure("ibv_alloc_parent_domain", EOPNOTSUPP,
          "device " + context.device.name() + " has no parent domains");
    }
    MemThreadDomain td = context.own(threadDomain, MemThreadDomain.class, "thread domain");
    return new MemParentDomain(this, td);
  }

  @Override
  protected void release() {
    fabric.released(type);
  }

  @Override
  protected String closeFunction() {
    return "ibv_dealloc_pd";
  }
}
