package io.rdmareactive.rdma.rdmacore;

import io.rdmareactive.rdma.verbs.ReceiveRequest;
import io.rdmareactive.rdma.verbs.SendRequest;
import java.lang.foreign.MemorySegment;

/** A {@link NativeQueuePair}'s two chained posts: {@link ListPost} over its send and receive flyweights. */
final class QueuePairLists {
  private QueuePairLists() {}

  /** What both lists of one queue pair use: the QP, its ledger, its flyweights. */
  private abstract static class OfQueuePair<R> extends ListPost<R> {
    final NativeQueuePair owner;
    final WorkRequestLedger ledger;
    final PostChains chains;
    final int maxSge;

    OfQueuePair(NativeQueuePair owner, PostChains chains, WorkRequestLedger ledger, int maxSge) {
      this.owner = owner;
      this.ledger = ledger;
      this.chains = chains;
      this.maxSge = maxSge;
    }
  }

  /** ibv_post_send of a list of ibv_send_wr. */
  static final class Sends extends OfQueuePair<SendRequest> {
    private SendWr[] chain = new SendWr[0];

    Sends(NativeQueuePair owner, PostChains chains, WorkRequestLedger ledger, int maxSge) {
      super(owner, chains, ledger, maxSge);
    }

    @Override
    ChainedWr[] chain(int n) {
      return chain = chains.sends(n, maxSge);
    }

    @Override
    long begin(SendRequest r) {
      owner.checkSend(r);
      return ledger.beginSend(r.wrId(), r.flags());
    }

    @Override
    void fill(int i, SendRequest r) {
      owner.fill(chain[i], r);
    }

    @Override
    int call(MemorySegment head, MemorySegment badWr) {
      NativeContext context = owner.nativeContext();
      return InlineVerbs.postSend(context.postSendFn, owner.qp, head, badWr, context.postsInKernel());
    }

    @Override
    void abort(long number) {
      ledger.abortSend(number);
    }

    @Override
    String function() {
      return "ibv_post_send";
    }
  }

  /** ibv_post_recv of a list of ibv_recv_wr. */
  static final class Receives extends OfQueuePair<ReceiveRequest> {
    private RecvWr[] chain = new RecvWr[0];

    Receives(NativeQueuePair owner, PostChains chains, WorkRequestLedger ledger, int maxSge) {
      super(owner, chains, ledger, maxSge);
    }

    @Override
    ChainedWr[] chain(int n) {
      return chain = chains.receives(n, maxSge);
    }

    @Override
    long begin(ReceiveRequest r) {
      owner.checkReceive(r);
      return ledger.beginReceive();
    }

    @Override
    void fill(int i, ReceiveRequest r) {
      chain[i].set(r);
    }

    @Override
    int call(MemorySegment head, MemorySegment badWr) {
      return InlineVerbs.post(owner.nativeContext().postRecvFn, owner.qp, head, badWr);
    }

    @Override
    void abort(long number) {
      ledger.abortReceive(number);
    }

    @Override
    String function() {
      return "ibv_post_recv";
    }
  }
}
