package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.QueuePairAddress;
import io.rdmareactive.rdma.verbs.QueuePairConnectOptions;
import io.rdmareactive.rdma.verbs.QueuePairState;
import io.rdmareactive.rdma.verbs.QueuePairType;
import io.rdmareactive.rdma.verbs.ReceiveRequest;
import io.rdmareactive.rdma.verbs.SendBatch;
import io.rdmareactive.rdma.verbs.SendRequest;
import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The doorbell alone, over a queue pair that records posts and fails where told. */
class SendDoorbellTest {

  /** A posted work request as the device would see it. */
  record Posted(long wrId, boolean signaled, boolean inline) {}

  /** Records lists; takes only the first {@code failAt} requests of the next list when set. */
  static final class RecordingQp implements QueuePair {
    final List<List<Posted>> lists = new ArrayList<>();
    final List<Posted> singles = new ArrayList<>();
    final List<List<Long>> receiveLists = new ArrayList<>();
    int failAt = -1;

    @Override
    public void postReceive(io.rdmareactive.rdma.verbs.ReceiveBatch batch) {
      List<Long> list = new ArrayList<>();
      int take = failAt >= 0 ? Math.min(failAt, batch.size()) : batch.size();
      for (int i = 0; i < take; i++) {
        list.add(batch.get(i).wrId());
      }
      receiveLists.add(list);
      batch.posted(take);
      if (take < batch.size()) {
        failAt = -1;
        throw NativeCallException.of("ibv_post_recv", NativeCallException.ENOMEM, "ENOMEM", "test: bad_wr " + take);
      }
    }

    @Override
    public void postSend(SendBatch batch) {
      List<Posted> list = new ArrayList<>();
      int take = failAt >= 0 ? Math.min(failAt, batch.size()) : batch.size();
      for (int i = 0; i < take; i++) {
        SendRequest r = batch.get(i);
        list.add(new Posted(r.wrId(), r.isSignaled(), (r.flags() & SendRequest.INLINE) != 0));
        requests.add(new SendRequest(r.scatterGather().capacity()).set(r));
      }
      lists.add(list);
      batch.posted(take);
      if (take < batch.size()) {
        failAt = -1;
        throw NativeCallException.of("ibv_post_send", NativeCallException.ENOMEM, "ENOMEM", "test: bad_wr " + take);
      }
    }

    @Override
    public void postSend(SendRequest r) {
      singles.add(new Posted(r.wrId(), r.isSignaled(), false));
    }

    /** A copy of every request posted in a list, in order. */
    final List<SendRequest> requests = new ArrayList<>();

    /** Every request posted, in order. */
    List<Posted> all() {
      List<Posted> all = new ArrayList<>();
      lists.forEach(all::addAll);
      all.addAll(singles);
      return all;
    }

    @Override public int qpNumber() { return 1; }
    @Override public QueuePairType type() { return QueuePairType.RC; }
    @Override public QueuePairState state() { return QueuePairState.RTS; }
    @Override public QueuePairAddress localAddress(QueuePairConnectOptions o) { throw new UnsupportedOperationException(); }
    @Override public void connect(QueuePairAddress r, QueuePairConnectOptions o) { throw new UnsupportedOperationException(); }
    @Override public void toError() { }
    @Override public void postReceive(ReceiveRequest r) { throw new UnsupportedOperationException(); }
    @Override public boolean isClosed() { return false; }
    @Override public void close() { }
  }

  /** A retired request as the parts see it. */
  record Retired(long wrId, boolean success, boolean bufferGone) {}

  static final class Recorder implements SendDoorbell.Retirement {
    final List<Retired> retired = new ArrayList<>();
    final List<Long> inlineFreed = new ArrayList<>();

    @Override
    public void sendRetired(long wrId, boolean success, boolean bufferGone) {
      retired.add(new Retired(wrId, success, bufferGone));
    }

    @Override
    public void inlinePosted(long wrId) {
      inlineFreed.add(wrId);
    }
  }

  private final RecordingQp qp = new RecordingQp();
  private final Recorder owner = new Recorder();
  private final ConnectionCounters counters = new ConnectionCounters(64);
  private final SendRequest request = new SendRequest();

  private SendDoorbell doorbell(int depth) {
    SendDoorbell d = new SendDoorbell(qp, depth, counters);
    d.retireTo(owner);
    return d;
  }

  private void queueData(SendDoorbell d, int index) {
    d.queue(request.reset(CompletionDispatcher.DATA | index, SendRequest.Opcode.SEND_WITH_IMM));
  }

  @Test
  void aDrainRingsOnceAndOnlyItsLastSendIsSignaled() {
    SendDoorbell d = doorbell(64);
    for (int i = 0; i < 5; i++) {
      queueData(d, i);
    }
    assertThat(qp.lists).isEmpty(); // nothing reaches the QP before the drain's end
    d.flush();
    assertThat(qp.lists).hasSize(1);
    assertThat(qp.lists.getFirst()).extracting(Posted::signaled).containsExactly(false, false, false, false, true);
    RdmaStatistics s = counters.snapshot(0, 0);
    assertThat(s.doorbells()).isEqualTo(1);
    assertThat(s.signaledSends()).isEqualTo(1);
    assertThat(d.outstanding()).isEqualTo(5);
  }

  @Test
  void oneCompletionRetiresTheWholeRunInOrder() {
    SendDoorbell d = doorbell(64);
    for (int i = 0; i < 5; i++) {
      queueData(d, i);
    }
    d.flush();
    long last = qp.lists.getFirst().get(4).wrId();
    assertThat(d.completed(last, true)).isTrue();
    assertThat(owner.retired).extracting(Retired::wrId)
        .containsExactly(CompletionDispatcher.DATA, CompletionDispatcher.DATA | 1, CompletionDispatcher.DATA | 2,
            CompletionDispatcher.DATA | 3, CompletionDispatcher.DATA | 4);
    assertThat(owner.retired).allMatch(Retired::success);
    assertThat(d.outstanding()).isZero();
    assertThat(d.completed(last, true)).as("a second completion for it is for nothing outstanding").isFalse();
  }

  @Test
  void aLongDrainRingsPerListAndSignalsOneInTheInterval() {
    SendDoorbell d = doorbell(100);
    for (int i = 0; i < 40; i++) {
      queueData(d, i);
    }
    d.flush();
    assertThat(qp.lists).extracting(List::size).containsExactly(SendDoorbell.MAX_POST_LIST, 40 - SendDoorbell.MAX_POST_LIST);
    List<Posted> all = qp.all();
    for (int i = 0, run = 0; i < all.size(); i++) {
      run = all.get(i).signaled() ? 0 : run + 1;
      assertThat(run).as("unsignaled run at " + i).isLessThan(SendDoorbell.SIGNAL_INTERVAL);
    }
    assertThat(qp.lists.getFirst().getLast().signaled()).isTrue();
    assertThat(all.getLast().signaled()).isTrue();
  }

  @Test
  void aSendThatFillsTheQueueIsSignaled() {
    SendDoorbell d = doorbell(6);
    for (int i = 0; i < 4; i++) {
      queueData(d, i);
    }
    d.flush(); // 4 outstanding
    queueData(d, 4);
    queueData(d, 5);
    d.flush();
    assertThat(qp.lists.get(1)).extracting(Posted::signaled).containsExactly(false, true);
    SendDoorbell e = doorbell(3);
    for (int i = 0; i < 3; i++) {
      queueData(e, i);
    }
    e.flush();
    assertThat(qp.lists.get(2)).extracting(Posted::signaled).containsExactly(false, false, true);
  }

  @Test
  void flushErrorsRetireEachRequestAlone() {
    SendDoorbell d = doorbell(64);
    for (int i = 0; i < 3; i++) {
      queueData(d, i);
    }
    d.flush();
    // A QP in ERROR flushes every posted request, signaled or not, each with its own completion.
    for (Posted p : qp.lists.getFirst()) {
      assertThat(d.completed(p.wrId(), false)).isTrue();
    }
    assertThat(owner.retired).extracting(Retired::success).containsExactly(false, false, false);
    assertThat(d.outstanding()).isZero();
  }

  @Test
  void aFailureAfterSilentSuccessesRetiresThemAsSucceeded() {
    SendDoorbell d = doorbell(64);
    for (int i = 0; i < 4; i++) {
      queueData(d, i);
    }
    d.flush();
    // The first two completed silently; the third failed (its own completion), the fourth flushed.
    assertThat(d.completed(qp.lists.getFirst().get(2).wrId(), false)).isTrue();
    assertThat(owner.retired).extracting(Retired::success).containsExactly(true, true, false);
    assertThat(d.completed(qp.lists.getFirst().get(3).wrId(), false)).isTrue();
    assertThat(d.outstanding()).isZero();
  }

  @Test
  void aPartialPostAtEveryPositionLeavesTheLedgerExact() {
    int n = 6;
    for (int bad = 0; bad < n; bad++) {
      RecordingQp q = new RecordingQp();
      Recorder o = new Recorder();
      SendDoorbell d = new SendDoorbell(q, 64, new ConnectionCounters(64));
      d.retireTo(o);
      for (int i = 0; i < n; i++) {
        d.queue(request.reset(CompletionDispatcher.DATA | i, SendRequest.Opcode.SEND_WITH_IMM));
      }
      q.failAt = bad;
      assertThatThrownBy(d::flush).isInstanceOf(NativeCallException.class);
      List<Posted> taken = q.lists.getFirst();
      assertThat(taken).hasSize(bad);
      if (bad == 0) {
        // Nothing posted: every request is retired as failed at once, and nothing else is posted.
        assertThat(o.retired).extracting(Retired::success).containsExactly(false, false, false, false, false, false);
        assertThat(q.singles).isEmpty();
        assertThat(d.outstanding()).isZero();
        continue;
      }
      // The posted part ended unsignaled: a signaled retirer follows it, whose completion retires
      // the posted ones as succeeded and the rest as failed, in order.
      assertThat(o.retired).as("nothing retired before a completion, bad_wr " + bad).isEmpty();
      assertThat(q.singles).hasSize(1);
      Posted retirer = q.singles.getFirst();
      assertThat(retirer.signaled()).isTrue();
      assertThat(retirer.wrId() & 0xFFL << 40).isEqualTo(CompletionDispatcher.RETIRER);
      assertThat(d.completed(retirer.wrId(), true)).isTrue();
      List<Boolean> expected = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        expected.add(i < bad);
      }
      expected.add(true); // the retirer's own
      assertThat(o.retired).extracting(Retired::success).as("bad_wr " + bad).containsExactlyElementsOf(expected);
      assertThat(o.retired.subList(0, n)).extracting(Retired::wrId).containsExactly(CompletionDispatcher.DATA,
          CompletionDispatcher.DATA | 1, CompletionDispatcher.DATA | 2, CompletionDispatcher.DATA | 3,
          CompletionDispatcher.DATA | 4, CompletionDispatcher.DATA | 5);
      assertThat(d.outstanding()).isZero();
    }
  }

  @Test
  void aPartialPostEndingSignaledNeedsNoRetirer() {
    SendDoorbell d = doorbell(64);
    for (int i = 0; i < 20; i++) {
      queueData(d, i);
    }
    qp.failAt = SendDoorbell.SIGNAL_INTERVAL; // the sixteenth, signaled by the interval, is the last taken
    assertThatThrownBy(d::flush).isInstanceOf(NativeCallException.class);
    assertThat(qp.lists.getFirst().getLast().signaled()).isTrue();
    assertThat(qp.singles).isEmpty();
    assertThat(d.completed(qp.lists.getFirst().getLast().wrId(), true)).isTrue();
    assertThat(owner.retired).hasSize(20);
    assertThat(owner.retired.subList(0, 16)).allMatch(Retired::success);
    assertThat(owner.retired.subList(16, 20)).noneMatch(Retired::success);
  }

  @Test
  void whatADisconnectLeftQueuedRetiresAsFailedInItsTurn() {
    SendDoorbell d = doorbell(64);
    queueData(d, 0);
    d.flush();
    queueData(d, 1);
    queueData(d, 2);
    d.discard();
    assertThat(owner.retired).as("behind a posted send that has not completed").isEmpty();
    assertThat(d.completed(qp.lists.getFirst().getFirst().wrId(), false)).isTrue(); // its flush
    assertThat(owner.retired).extracting(Retired::success).containsExactly(false, false, false);
    assertThat(d.outstanding()).isZero();
    assertThat(qp.lists).hasSize(1);
  }

  @Test
  void anInlineSendGivesItsBufferBackWhenPosted() {
    SendDoorbell d = doorbell(64);
    d.queue(request.reset(CompletionDispatcher.DATA | 7, SendRequest.Opcode.SEND_WITH_IMM)
        .flags(SendRequest.SIGNALED | SendRequest.INLINE));
    queueData(d, 8);
    d.flush();
    assertThat(qp.lists.getFirst()).extracting(Posted::inline).containsExactly(true, false);
    assertThat(owner.inlineFreed).containsExactly(CompletionDispatcher.DATA | 7);
    d.completed(qp.lists.getFirst().getLast().wrId(), true);
    assertThat(owner.retired).containsExactly(new Retired(CompletionDispatcher.DATA | 7, true, true),
        new Retired(CompletionDispatcher.DATA | 8, true, false));
  }

  @Test
  void aFullBatchIsPostedBeforeTheNextRequestJoinsIt() {
    SendDoorbell d = doorbell(100);
    for (int i = 0; i <= SendDoorbell.MAX_POST_LIST; i++) {
      queueData(d, i);
    }
    assertThat(qp.lists).as("the full list, rung before the next joined").hasSize(1);
    d.flush();
    assertThat(qp.lists).extracting(List::size).containsExactly(SendDoorbell.MAX_POST_LIST, 1);
    List<Posted> all = qp.all();
    for (int i = 0; i < all.size(); i++) {
      assertThat(SendDoorbell.queuedId(all.get(i).wrId())).as("request " + i).isEqualTo(CompletionDispatcher.DATA | i);
    }
  }

  @Test
  void aSendFilledInPlaceGoesAsTheSameRequestCopiedInWould() {
    try (RdmaContext context = new InMemoryProvider().open("mem0"); ProtectionDomain pd = context.allocateProtectionDomain();
        Arena arena = Arena.ofConfined()) {
      MemoryRegion region = pd.registerMemory(arena.allocate(4096), Access.local());
      SendDoorbell d = doorbell(100);
      for (int i = 0; i <= SendDoorbell.MAX_POST_LIST; i++) { // across a full list too
        if (i % 2 == 0) {
          d.queueSend(CompletionDispatcher.DATA | i, SendRequest.Opcode.SEND_WITH_IMM, region, 64 + i, 8 + i,
              SendRequest.SIGNALED | SendRequest.INLINE, 1000 + i);
        } else {
          d.queue(request.reset(CompletionDispatcher.DATA | i, SendRequest.Opcode.SEND_WITH_IMM).gather(region, 64 + i, 8 + i)
              .flags(SendRequest.SIGNALED | SendRequest.INLINE).immediate(1000 + i));
        }
      }
      d.flush();
      assertThat(qp.requests).hasSize(SendDoorbell.MAX_POST_LIST + 1);
      for (int i = 0; i < qp.requests.size(); i++) {
        SendRequest r = qp.requests.get(i);
        assertThat(SendDoorbell.queuedId(r.wrId())).as("id of " + i).isEqualTo(CompletionDispatcher.DATA | i);
        assertThat(r.opcode()).isEqualTo(SendRequest.Opcode.SEND_WITH_IMM);
        assertThat(r.immediateData()).isEqualTo(1000 + i);
        assertThat(r.flags() & SendRequest.INLINE).as("inline " + i).isNotZero();
        assertThat(r.scatterGather().count()).isEqualTo(1);
        assertThat(r.scatterGather().address(0)).isEqualTo(region.address() + 64 + i);
        assertThat(r.scatterGather().length(0)).isEqualTo(8 + i);
        assertThat(r.scatterGather().localKey(0)).isEqualTo(region.localKey());
      }
      assertThat(owner.inlineFreed).hasSize(SendDoorbell.MAX_POST_LIST + 1);
      region.close();
    }
  }

  @Test
  void sequenceNumbersWrapWithoutConfusingCompletions() {
    SendDoorbell d = doorbell(8);
    for (int round = 0; round < 70_000 / 8; round++) {
      for (int i = 0; i < 8; i++) {
        queueData(d, i);
      }
      d.flush();
      List<Posted> list = qp.lists.getLast();
      assertThat(d.completed(list.getLast().wrId(), true)).isTrue();
    }
    assertThat(owner.retired).hasSize(70_000 / 8 * 8).allMatch(Retired::success);
    assertThat(d.outstanding()).isZero();
  }

  @Test
  void aCompletionForNothingOutstandingRetiresNothing() {
    SendDoorbell d = doorbell(8);
    assertThat(d.completed(CompletionDispatcher.DATA | 3, true)).isFalse();
    queueData(d, 0);
    assertThat(d.completed(CompletionDispatcher.DATA, true)).as("queued, not posted").isFalse();
    assertThat(owner.retired).isEmpty();
  }
}
