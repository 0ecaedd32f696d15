package io.rdmareactive.rdma.inmemory;

import static io.rdmareactive.rdma.NativeCallException.EINVAL;
import static io.rdmareactive.rdma.NativeCallException.ENOMEM;

import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.ReceiveRequest;
import io.rdmareactive.rdma.verbs.SharedReceiveQueue;
import io.rdmareactive.rdma.verbs.SharedReceiveQueueOptions;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import org.jspecify.annotations.Nullable;

final class MemSharedReceiveQueue extends AbstractRdmaResource implements SharedReceiveQueue {
  final MemProtectionDomain scope;
  private final Fabric fabric;
  private final MemProtectionDomain pd;
  private final int maxWorkRequests;
  private final int maxScatterGather;
  private final int srqNumber;
  /** XRC only: where its completions go. */
  final @Nullable MemCompletionQueue cq;
  final @Nullable MemXrcDomainState xrcd;
  final MemWorkCompletion.Slots slots;
  final MemReceiveQueue receives; // guarded by fabric.lock

  private MemSharedReceiveQueue(AbstractRdmaResource parent, MemProtectionDomain pd, SharedReceiveQueueOptions options,
      int srqNumber, @Nullable MemCompletionQueue cq, @Nullable MemXrcDomainState xrcd) {
    super("in-memory " + (srqNumber < 0 ? "SRQ" : "XRC SRQ " + srqNumber) + " #" + pd.fabric.nextHandle(), parent);
    this.fabric = pd.fabric;
    this.scope = pd.scope();
    this.pd = pd;
    this.maxWorkRequests = options.maxWorkRequests();
    this.maxScatterGather = options.maxScatterGather();
    this.srqNumber = srqNumber;
    this.cq = cq;
    this.xrcd = xrcd;
    this.slots = new MemWorkCompletion.Slots(options.maxWorkRequests());
    this.receives = new MemReceiveQueue(fabric, slots, scope);
  }

  private static void check(SharedReceiveQueueOptions options) {
    if (options.maxWorkRequests() > MemContext.MAX_QP_WR || options.maxScatterGather() > MemContext.MAX_SGE) {
      throw Fabric.failure("ibv_create_srq", EINVAL, "SRQ of " + options.maxWorkRequests() + " work requests and "
          + options.maxScatterGather() + " scatter/gather entries exceeds the device maximum of "
          + MemContext.MAX_QP_WR + " and " + MemContext.MAX_SGE);
    }
  }

  static MemSharedReceiveQueue plain(MemProtectionDomain pd, SharedReceiveQueueOptions options) {
    check(options);
    MemSharedReceiveQueue srq = new MemSharedReceiveQueue(pd, pd, options, -1, null, null);
    srq.fabric.created("srq");
    return srq;
  }

  static MemSharedReceiveQueue xrc(MemXrcDomain xrcd, MemProtectionDomain pd, MemCompletionQueue cq,
      SharedReceiveQueueOptions options) {
    check(options);
    pd.ensureOpen();
    cq.ensureOpen();
    Fabric fabric = pd.fabric;
    synchronized (fabric.lock) {
      cq.commit(options.maxWorkRequests(), "XRC SRQ");
    }
    MemSharedReceiveQueue srq;
    try {
      srq = new MemSharedReceiveQueue(xrcd, pd, options, fabric.nextSrqNumber(), cq, xrcd.core);
    } catch (RuntimeException e) {
      synchronized (fabric.lock) {
        cq.uncommit(options.maxWorkRequests());
      }
      throw e;
    }
    try {
      pd.acquireLease();
      try {
        cq.acquireLease();
      } catch (RuntimeException e) {
        pd.releaseLease();
        throw e;
      }
    } catch (RuntimeException e) {
      synchronized (fabric.lock) {
        cq.uncommit(options.maxWorkRequests());
      }
      srq.abandon();
      throw e;
    }
    synchronized (fabric.lock) {
      fabric.xrcSrqs.put(srq.srqNumber, srq);
    }
    fabric.created("srq");
    return srq;
  }

  @Override
  public int maxWorkRequests() {
    return maxWorkRequests;
  }

  @Override
  public int srqNumber() {
    return srqNumber;
  }

  @Override
  public void postReceive(ReceiveRequest request) {
    ensureOpen();
    if (request.scatterGather().count() > maxScatterGather) {
      throw Fabric.failure("ibv_post_srq_recv", EINVAL, request.scatterGather().count()
          + " scatter/gather entries exceed the SRQ's maximum of " + maxScatterGather);
    }
    PostedReceive w = PostedReceive.of(request);
    synchronized (fabric.lock) {
      if (slots.full()) {
        throw Fabric.failure("ibv_post_srq_recv", ENOMEM, "shared receive queue full: " + slots.used
            + " of " + slots.capacity + " work requests outstanding (posted or completed but not polled)");
      }
      slots.used++;
      receives.post(w);
    }
  }

  @Override
  protected void release() {
    synchronized (fabric.lock) {
      receives.clear();
      // Only XRC senders can still wait here (a plain SRQ outlives its QPs, whose end fails theirs):
      // their SRQ number now names nothing, which the responder answers as an invalid request.
      receives.failStalled(null, WorkCompletion.Status.REM_INV_REQ_ERR);
      if (cq != null) {
        fabric.xrcSrqs.remove(srqNumber);
        cq.uncommit(maxWorkRequests);
      }
    }
    if (cq != null) {
      cq.releaseLease();
      pd.releaseLease();
    }
    fabric.released("srq");
  }

  @Override
  protected String closeFunction() {
    return "ibv_destroy_srq";
  }
}
