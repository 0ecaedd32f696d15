package io.rdmareactive.rdma.inmemory;

import static io.rdmareactive.rdma.NativeCallException.EOPNOTSUPP;

import io.rdmareactive.rdma.spi.AbstractProtectionDomain;
import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.MemoryWindow;
import io.rdmareactive.rdma.verbs.ParentDomain;
import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.QueuePairOptions;
import io.rdmareactive.rdma.verbs.QueuePairType;
import io.rdmareactive.rdma.verbs.SharedReceiveQueue;
import io.rdmareactive.rdma.verbs.SharedReceiveQueueOptions;
import io.rdmareactive.rdma.verbs.ThreadDomain;
import java.lang.foreign.MemorySegment;
import java.util.Set;
import org.jspecify.annotations.Nullable;

class MemProtectionDomain extends AbstractProtectionDomain implements MemContext.Owned {
  final MemContext context;
  final Fabric fabric;
  private final String type;
  /** Whether closing this closes its context too (a PD shared by endpoints, on a context of its own). */
  private final boolean ownsContext;

  MemProtectionDomain(MemContext context) {
    this(context, "pd", "in-memory PD #" + context.fabric.nextHandle(), context);
  }

  MemProtectionDomain(MemContext context, String type, String description, @Nullable AbstractRdmaResource parent) {
    super(description, parent);
    this.context = context;
    this.fabric = context.fabric;
    this.type = type;
    this.ownsContext = parent == null;
    fabric.created(type);
  }

  /**
   * A PD that the endpoints on {@code device} may share (endpoint contexts stand for librdmacm's
   * one context per device), on a context of its own that closing it closes.
   */
  static MemProtectionDomain onOwnContext(InMemoryProvider.DeviceSpec device) {
    MemContext ctx = new MemContext(device);
    try {
      // No lease on its context: it closes the context itself, after it.
      return new MemProtectionDomain(ctx, "pd", "in-memory shared PD #" + ctx.fabric.nextHandle(), null);
    } catch (RuntimeException e) {
      ctx.close();
      throw e;
    }
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
  protected MemoryRegion register(MemorySegment segment, Set<Access> access) {
    return new MemMemoryRegion(this, segment, access);
  }

  @Override
  protected MemoryWindow newMemoryWindow() {
    return new MemMemoryWindow(this);
  }

  @Override
  protected QueuePair newQueuePair(QueuePairOptions options) {
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
  protected SharedReceiveQueue newSharedReceiveQueue(SharedReceiveQueueOptions options) {
    return MemSharedReceiveQueue.plain(this, options);
  }

  @Override
  protected ParentDomain newParentDomain(ThreadDomain threadDomain) {
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
    if (ownsContext) {
      context.close();
    }
  }

  @Override
  protected String closeFunction() {
    return "ibv_dealloc_pd";
  }
}
