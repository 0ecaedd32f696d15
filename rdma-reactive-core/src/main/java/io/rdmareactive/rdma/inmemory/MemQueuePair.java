package io.rdmareactive.rdma.inmemory;

import static io.rdmareactive.rdma.NativeCallException.EINVAL;

import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.QueuePairAddress;
import io.rdmareactive.rdma.verbs.QueuePairConnectOptions;
import io.rdmareactive.rdma.verbs.QueuePairOptions;
import io.rdmareactive.rdma.verbs.QueuePairState;
import io.rdmareactive.rdma.verbs.QueuePairType;
import io.rdmareactive.rdma.verbs.ReceiveRequest;
import io.rdmareactive.rdma.verbs.SendRequest;
import java.util.ArrayList;
import java.util.List;

/** A handle on a queue pair: the creator's, or (XRC receive QPs) one opened by number. */
final class MemQueuePair extends AbstractRdmaResource implements QueuePair {
  private final MemQueuePairState core;
  private final Fabric fabric;
  /** What this handle leases besides its parent (CQs, SRQ), released on close. */
  private final List<AbstractRdmaResource> leased;
  private final int sendCommit;
  private final int recvCommit;

  private MemQueuePair(AbstractRdmaResource parent, MemQueuePairState core, List<AbstractRdmaResource> leased, int sendCommit,
      int recvCommit) {
    super("in-memory " + core.type + " QP " + core.qpn, parent);
    this.core = core;
    this.fabric = core.fabric;
    this.leased = leased;
    this.sendCommit = sendCommit;
    this.recvCommit = recvCommit;
  }

  static MemQueuePair create(MemProtectionDomain pd, QueuePairOptions o) {
    MemContext ctx = pd.context;
    Fabric fabric = ctx.fabric;
    MemCompletionQueue scq = ctx.own(o.sendCompletionQueue(), MemCompletionQueue.class, "send CQ");
    MemCompletionQueue rcq = null;
    MemSharedReceiveQueue srq = null;
    boolean xrcSend = o.type() == QueuePairType.XRC_SEND;
    if (!xrcSend) {
      if (o.receiveCompletionQueue() == null) {
        throw new IllegalArgumentException("a " + o.type() + " queue pair needs a receive CQ");
      }
      rcq = ctx.own(o.receiveCompletionQueue(), MemCompletionQueue.class, "receive CQ");
      if (o.sharedReceiveQueue() != null) {
        if (!(o.sharedReceiveQueue() instanceof MemSharedReceiveQueue s) || s.srqNumber() >= 0) {
          throw new IllegalArgumentException("shared receive queue " + o.sharedReceiveQueue()
              + " is not a plain in-memory SRQ (XRC SRQs are reached through remoteSrqNumber)");
        }
        srq = s;
      }
    }
    int maxRecv = xrcSend || srq != null ? 0 : o.maxReceiveWorkRequests();
    if (o.maxSendWorkRequests() > MemContext.MAX_QP_WR || maxRecv > MemContext.MAX_QP_WR
        || o.maxSendScatterGather() > MemContext.MAX_SGE || o.maxReceiveScatterGather() > MemContext.MAX_SGE) {
      throw Fabric.failure("ibv_create_qp", EINVAL, "QP capacities " + o.maxSendWorkRequests() + "/" + maxRecv
          + " work requests, " + o.maxSendScatterGather() + "/" + o.maxReceiveScatterGather()
          + " scatter/gather entries exceed the device maximum of " + MemContext.MAX_QP_WR + " and "
          + MemContext.MAX_SGE);
    }
    scq.ensureOpen();
    List<AbstractRdmaResource> leased = new ArrayList<>(3);
    leased.add(scq);
    if (rcq != null) {
      rcq.ensureOpen();
      leased.add(rcq);
    }
    if (srq != null) {
      srq.ensureOpen();
      leased.add(srq);
    }
    int sendCommit = o.maxSendWorkRequests();
    synchronized (fabric.lock) {
      if (rcq == scq) {
        scq.commit(sendCommit + maxRecv, "send queue plus receive queue");
      } else {
        scq.commit(sendCommit, "send queue");
        if (rcq != null) {
          try {
            rcq.commit(maxRecv, "receive queue");
          } catch (RuntimeException e) {
            scq.uncommit(sendCommit);
            throw e;
          }
        }
      }
    }
    MemQueuePairState core = new MemQueuePairState(o.type(), ctx, pd.scope(), scq, rcq, srq, null, o.maxSendWorkRequests(), maxRecv,
        Math.max(1, o.maxSendScatterGather()), Math.max(1, o.maxReceiveScatterGather()), o.maxInlineData(),
        o.signalAll());
    MemQueuePair qp;
    try {
      qp = new MemQueuePair(pd, core, leased, sendCommit, maxRecv);
    } catch (RuntimeException e) {
      uncommit(scq, rcq, sendCommit, maxRecv);
      throw e;
    }
    int taken = 0;
    try {
      for (AbstractRdmaResource r : leased) {
        r.acquireLease();
        taken++;
      }
    } catch (RuntimeException e) {
      for (int i = 0; i < taken; i++) {
        leased.get(i).releaseLease();
      }
      uncommit(scq, rcq, sendCommit, maxRecv);
      qp.abandon();
      throw e;
    }
    synchronized (fabric.lock) {
      fabric.queuePairs.put(core.qpn, core);
    }
    fabric.created("qp");
    return qp;
  }

  private static void uncommit(MemCompletionQueue scq, MemCompletionQueue rcq, int send, int recv) {
    synchronized (scq.context.fabric.lock) {
      scq.uncommit(send);
      if (rcq != null) {
        rcq.uncommit(recv);
      }
    }
  }

  static MemQueuePair xrcReceive(MemXrcDomain xrcd) {
    MemQueuePairState core = new MemQueuePairState(QueuePairType.XRC_RECV, xrcd.context, null, null, null, null, xrcd.core, 0, 0, 1, 1, 0,
        false);
    MemQueuePair qp = new MemQueuePair(xrcd, core, List.of(), 0, 0);
    synchronized (qp.fabric.lock) {
      qp.fabric.queuePairs.put(core.qpn, core);
    }
    qp.fabric.created("qp");
    return qp;
  }

  static MemQueuePair openXrcReceive(MemXrcDomain xrcd, int qpNumber) {
    MemQueuePairState core;
    Fabric fabric = xrcd.context.fabric;
    synchronized (fabric.lock) {
      core = fabric.queuePairs.get(qpNumber);
      if (core == null || core.type != QueuePairType.XRC_RECV || core.xrcd != xrcd.core) {
        throw Fabric.failure("ibv_open_qp", EINVAL, "no XRC receive QP " + qpNumber + " in " + xrcd);
      }
      core.handles++;
    }
    try {
      MemQueuePair qp = new MemQueuePair(xrcd, core, List.of(), 0, 0);
      fabric.created("qp");
      return qp;
    } catch (RuntimeException e) {
      synchronized (fabric.lock) {
        if (--core.handles == 0) {
          core.destroyLocked();
        }
      }
      throw e;
    }
  }

  @Override
  public int qpNumber() {
    return core.qpn;
  }

  @Override
  public QueuePairType type() {
    return core.type;
  }

  @Override
  public QueuePairState state() {
    ensureOpen();
    return core.state();
  }

  @Override
  public QueuePairAddress localAddress(QueuePairConnectOptions options) {
    ensureOpen();
    return core.localAddress(options);
  }

  @Override
  public void connect(QueuePairAddress remote, QueuePairConnectOptions options) {
    ensureOpen();
    core.connect(remote, options);
  }

  @Override
  public void toError() {
    ensureOpen();
    core.toError();
  }

  /** RESET to INIT, so receives can be posted before connecting (as rdma_create_ep leaves a QP). */
  void toInit() {
    ensureOpen();
    core.toInit();
  }

  @Override
  public void postSend(SendRequest request) {
    ensureOpen();
    core.postSend(request);
  }

  @Override
  public void postReceive(ReceiveRequest request) {
    ensureOpen();
    core.postReceive(request);
  }

  @Override
  protected void release() {
    synchronized (fabric.lock) {
      if (--core.handles == 0) {
        core.destroyLocked();
      }
      if (core.sendCq != null) {
        core.sendCq.uncommit(sendCommit);
      }
      if (core.recvCq != null) {
        core.recvCq.uncommit(recvCommit);
      }
    }
    for (AbstractRdmaResource r : leased) {
      r.releaseLease();
    }
    fabric.released("qp");
  }

  @Override
  protected String closeFunction() {
    return "ibv_destroy_qp";
  }
}
