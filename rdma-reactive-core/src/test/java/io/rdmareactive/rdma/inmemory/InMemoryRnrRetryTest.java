package io.rdmareactive.rdma.inmemory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.conformance.Loopback;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.QueuePairConnectOptions;
import io.rdmareactive.rdma.verbs.QueuePairOptions;
import io.rdmareactive.rdma.verbs.QueuePairState;
import io.rdmareactive.rdma.verbs.QueuePairType;
import io.rdmareactive.rdma.verbs.RdmaResource;
import io.rdmareactive.rdma.verbs.ReceiveRequest;
import io.rdmareactive.rdma.verbs.SendRequest;
import io.rdmareactive.rdma.verbs.SharedReceiveQueue;
import io.rdmareactive.rdma.verbs.SharedReceiveQueueOptions;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import io.rdmareactive.rdma.verbs.WorkCompletion.Status;
import io.rdmareactive.rdma.verbs.XrcDomain;
import io.rdmareactive.rdma.verbs.XrcDomainOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * RC's receiver-not-ready retry on the in-memory fabric, through the public verbs API: a SEND that
 * finds no receive waits for one (the QP's later work requests behind it, in order) within its RNR
 * retries, and ends as rxe ends it when they run out or a QP goes away.
 */
class InMemoryRnrRetryTest extends InMemoryFabricTest {
  private static final int FOREVER = 7;
  /** Generous: waits here end as soon as their completions come. */
  private static final Duration WAIT = Duration.ofSeconds(10);

  /** The defaults with {@code rnrRetry} retries, against a responder whose min RNR timer is {@code minRnrTimer}. */
  private static QueuePairConnectOptions rnr(int rnrRetry, int minRnrTimer) {
    QueuePairConnectOptions d = QueuePairConnectOptions.defaults();
    return new QueuePairConnectOptions(d.portNumber(), d.gidIndex(), d.pathMtu(), d.remoteAccess(), d.timeout(),
        d.retryCount(), rnrRetry, minRnrTimer, d.maxReadAtomic(), d.localPacketSequenceNumber());
  }

  private static void put(MemorySegment m, long offset, String s) {
    MemorySegment.copy(MemorySegment.ofArray(s.getBytes(StandardCharsets.US_ASCII)), 0, m, offset, s.length());
  }

  private static String get(MemorySegment m, long offset, int length) {
    return new String(m.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.US_ASCII);
  }

  private static void assertOnly(List<WorkCompletion> wcs, long wrId, Status status) {
    assertThat(wcs).singleElement().satisfies(w -> {
      assertThat(w.wrId()).isEqualTo(wrId);
      assertThat(w.status()).isEqualTo(status);
    });
  }

  /** A loopback whose a has posted 8-byte sends {@code wrIds} to b, which has no receive: they wait for ever. */
  private Loopback stalled(long... wrIds) {
    Loopback l = new Loopback(context, 0, 4, false, rnr(FOREVER, 12));
    for (long id : wrIds) {
      l.a.postSend(new SendRequest().send(id, l.mr, 0, 8));
    }
    return l;
  }

  private static List<Long> ids(List<WorkCompletion> wcs) {
    return wcs.stream().map(WorkCompletion::wrId).toList();
  }

  @Test
  void aSendThatFindsNoReceiveWaitsForOneAndTheWorkBehindItFollowsInOrder() {
    try (Loopback l = new Loopback(context, 0, 4, true, rnr(FOREVER, 12))) {
      put(l.memory, 0, "first-msg");
      put(l.memory, 16, "write-dat");
      put(l.memory, 32, "third-msg");
      l.a.postSend(new SendRequest().send(1, l.mr, 0, 9));
      l.a.postSend(new SendRequest().write(2, l.mr, 16, 9, l.mr.address() + 2048, l.mr.remoteKey()));
      l.a.postSend(new SendRequest().send(3, l.mr, 32, 9));
      assertThat(l.pollAvailable(0)).as("the send waits for a receive, the rest behind it").isEmpty();
      assertThat(l.a.state()).isEqualTo(QueuePairState.RTS);
      assertThat(get(l.memory, 2048, 9)).as("the write behind it has not run").isEqualTo("\0".repeat(9));
      l.a.postSend(new SendRequest().send(4, l.mr, 0, 1));
      assertThatThrownBy(() -> l.a.postSend(new SendRequest().send(5, l.mr, 0, 1)))
          .as("held work requests keep their send-queue slots").isInstanceOf(NativeCallException.class)
          .satisfies(e -> assertThat(((NativeCallException) e).errno()).isEqualTo(NativeCallException.ENOMEM));

      l.cq.requestNotification(false);
      l.receiveOnB(10, 4096, 64); // delivers 1, then 2 runs; 3 finds no receive and waits again
      assertThat(l.channel.awaitEvent(WAIT)).as("the completions notify the sender's channel").isTrue();
      assertThat(l.channel.nextEvent()).isSameAs(l.cq);
      l.cq.acknowledgeEvents(1);
      List<WorkCompletion> first = l.pollAtLeast(3);
      assertThat(ids(first)).containsExactly(10L, 1L, 2L);
      assertThat(first).allMatch(WorkCompletion::isSuccess);
      assertThat(first.get(0).byteLength()).isEqualTo(9);
      assertThat(get(l.memory, 4096, 9)).isEqualTo("first-msg");
      assertThat(get(l.memory, 2048, 9)).isEqualTo("write-dat");
      assertThat(l.pollAvailable(0)).isEmpty();

      l.receiveOnB(11, 4160, 64);
      l.receiveOnB(12, 4224, 64);
      List<WorkCompletion> rest = l.pollAtLeast(4);
      assertThat(ids(rest)).containsExactly(11L, 3L, 12L, 4L);
      assertThat(rest).allMatch(WorkCompletion::isSuccess);
      assertThat(get(l.memory, 4160, 9)).isEqualTo("third-msg");
      assertThat(l.a.state()).isEqualTo(QueuePairState.RTS);
    }
  }

  /** A PD, a CQ, 8 KiB of registered memory, and what a test adds to them; closed in reverse. */
  private final class Parts implements AutoCloseable {
    final ProtectionDomain pd = context.allocateProtectionDomain();
    final CompletionQueue cq = context.createCompletionQueue(64, null);
    final Arena arena = Arena.ofConfined();
    final MemorySegment memory = arena.allocate(8192, 64);
    final MemoryRegion mr = pd.registerMemory(memory, Access.remote());
    final Loopback.Poller poller = new Loopback.Poller(cq);
    private final Deque<RdmaResource> added = new ArrayDeque<>();

    <T extends RdmaResource> T add(T resource) {
      added.push(resource);
      return resource;
    }

    /** Two QPs of {@code a} and {@code b}, connected to each other with {@code o}. */
    QueuePair[] pair(QueuePairOptions a, QueuePairOptions b, QueuePairConnectOptions o) {
      QueuePair qa = add(pd.createQueuePair(a));
      QueuePair qb = add(pd.createQueuePair(b));
      qa.connect(qb.localAddress(o), o);
      qb.connect(qa.localAddress(o), o);
      return new QueuePair[] {qa, qb};
    }

    @Override
    public void close() {
      while (!added.isEmpty()) {
        added.pop().close();
      }
      mr.close();
      arena.close();
      cq.close();
      pd.close();
    }
  }

  @Test
  void sendersStalledOnASharedReceiveQueueGetItsReceivesOldestFirst() {
    try (Parts p = new Parts()) {
      SharedReceiveQueue srq = p.add(p.pd.createSharedReceiveQueue(SharedReceiveQueueOptions.of(8)));
      QueuePairOptions plain = QueuePairOptions.reliable(p.cq, 4);
      QueuePair[] one = p.pair(plain, plain.withSharedReceiveQueue(srq), rnr(FOREVER, 1));
      QueuePair[] two = p.pair(plain, plain.withSharedReceiveQueue(srq), rnr(FOREVER, 1));
      put(p.memory, 0, "from-a1");
      put(p.memory, 16, "from-a2");
      one[0].postSend(new SendRequest().send(1, p.mr, 0, 7));
      two[0].postSend(new SendRequest().send(2, p.mr, 16, 7));
      one[0].postSend(new SendRequest().send(3, p.mr, 0, 7));

      srq.postReceive(new ReceiveRequest().set(20, p.mr, 4096, 64));
      List<WorkCompletion> first = p.poller.pollAtLeast(2);
      assertThat(ids(first)).as("the first pair stalled first").containsExactly(20L, 1L);
      assertThat(first.get(0).qpNumber()).isEqualTo(one[1].qpNumber());
      assertThat(get(p.memory, 4096, 7)).isEqualTo("from-a1");

      srq.postReceive(new ReceiveRequest().set(21, p.mr, 4160, 64));
      srq.postReceive(new ReceiveRequest().set(22, p.mr, 4224, 64));
      List<WorkCompletion> rest = p.poller.pollAtLeast(4);
      assertThat(ids(rest)).as("the second pair waited longer than the first's second send")
          .containsExactly(21L, 2L, 22L, 3L);
      assertThat(rest.get(0).qpNumber()).isEqualTo(two[1].qpNumber());
      assertThat(rest).allMatch(WorkCompletion::isSuccess);
      assertThat(get(p.memory, 4160, 7)).isEqualTo("from-a2");
    }
  }

  @Test
  void anInlineSendHeldBehindAStallCarriesItsBytesAsPosted() {
    try (Parts p = new Parts()) {
      QueuePair[] qp = p.pair(QueuePairOptions.reliable(p.cq, 4).withMaxInlineData(64),
          QueuePairOptions.reliable(p.cq, 4), rnr(FOREVER, 1));
      put(p.memory, 0, "as-posted");
      qp[0].postSend(new SendRequest().send(1, p.mr, 0, 9).flags(SendRequest.SIGNALED | SendRequest.INLINE));
      put(p.memory, 0, "reused!!!"); // allowed once an inline send is posted
      qp[1].postReceive(new ReceiveRequest().set(9, p.mr, 4096, 64));
      assertThat(ids(p.poller.pollAtLeast(2))).containsExactly(9L, 1L);
      assertThat(get(p.memory, 4096, 9)).isEqualTo("as-posted");
    }
  }

  @Test
  void finiteRetriesRunOutWithRnrRetryExcErrAndFlushWhatWaitsBehind() {
    // 3 retries of 20.48 ms: the second post almost always lands behind the stall; if it came after
    // the QP failed, ERROR flushes it all the same.
    try (Loopback l = new Loopback(context, 0, 8, false, rnr(3, 22))) {
      l.a.postSend(new SendRequest().send(1, l.mr, 0, 8));
      l.a.postSend(new SendRequest().write(2, l.mr, 0, 8, l.mr.address() + 2048, l.mr.remoteKey()));
      List<WorkCompletion> wcs = l.pollAtLeast(2);
      assertThat(ids(wcs)).containsExactly(1L, 2L);
      assertThat(wcs).extracting(WorkCompletion::status).containsExactly(Status.RNR_RETRY_EXC_ERR, Status.WR_FLUSH_ERR);
      assertThat(l.a.state()).isEqualTo(QueuePairState.ERROR);
      l.receiveOnB(10, 4096, 64);
      assertThat(l.pollAvailable(0)).as("no send is left to take the receive").isEmpty();
      l.b.toError();
      assertOnly(l.pollAtLeast(1), 10, Status.WR_FLUSH_ERR);
    }
  }

  @Test
  void theKernelCmsMinRnrTimerOfZeroMeans65536HundredthsOfAMillisecond() {
    assertThat(RnrTimer.budgetNanos(6, 0)).as("RNR_RETRY 6 over the CM").isEqualTo(6 * 655_360_000L);
    assertThat(RnrTimer.budgetNanos(1, 1)).isEqualTo(10_000L);
    assertThat(RnrTimer.budgetNanos(1, 12)).isEqualTo(640_000L);
    assertThat(RnrTimer.budgetNanos(2, 14)).isEqualTo(2 * 1_280_000L);
    assertThat(RnrTimer.validTimer(31)).isTrue();
    assertThat(RnrTimer.validTimer(32)).isFalse();
    try (Loopback l = new Loopback(context, 0, 4, false)) {
      CompletionQueue freshCq = context.createCompletionQueue(4, null);
      QueuePair fresh = l.pd.createQueuePair(QueuePairOptions.reliable(freshCq, 1));
      try {
        assertThatThrownBy(() -> fresh.connect(l.b.localAddress(rnr(8, 0)), rnr(8, 0)))
            .isInstanceOf(NativeCallException.class).hasMessageContaining("ibv_modify_qp")
            .satisfies(e -> assertThat(((NativeCallException) e).errno()).isEqualTo(NativeCallException.EINVAL));
        assertThatThrownBy(() -> fresh.connect(l.b.localAddress(rnr(7, 32)), rnr(7, 32)))
            .isInstanceOf(NativeCallException.class).hasMessageContaining("min RNR timer");
      } finally {
        fresh.close();
        freshCq.close();
      }
    }
  }

  @Test
  void aStalledSenderThatGoesToErrorFlushesEverythingItHeld() {
    try (Loopback l = stalled(1, 2)) {
      l.a.toError();
      assertThat(l.pollAtLeast(2)).extracting(WorkCompletion::wrId, WorkCompletion::status)
          .containsExactly(tuple(1L, Status.WR_FLUSH_ERR), tuple(2L, Status.WR_FLUSH_ERR));
      l.receiveOnB(10, 4096, 64);
      assertThat(l.pollAvailable(0)).as("the flushed sends no longer wait for it").isEmpty();
    }
  }

  @Test
  void aStalledSenderThatIsDestroyedFlushesAndLeavesTheQueueItWaitedOn() {
    try (Loopback l = stalled(1, 2)) {
      l.a.close();
      assertThat(l.pollAtLeast(2)).extracting(WorkCompletion::status)
          .containsExactly(Status.WR_FLUSH_ERR, Status.WR_FLUSH_ERR);
      l.receiveOnB(10, 4096, 64);
      l.b.toError();
      assertThat(l.pollAtLeast(1)).as("the receive was still posted, taken by no ghost").singleElement()
          .satisfies(w -> assertThat(w.wrId()).isEqualTo(10));
    }
  }

  @Test
  void aTargetThatGoesToErrorOrIsDestroyedFailsTheSendsWaitingForItWithRetryExcErr() {
    try (Loopback l = stalled(1, 2)) {
      l.b.toError();
      assertThat(l.pollAtLeast(2)).extracting(WorkCompletion::wrId, WorkCompletion::status)
          .containsExactly(tuple(1L, Status.RETRY_EXC_ERR), tuple(2L, Status.WR_FLUSH_ERR));
      assertThat(l.a.state()).isEqualTo(QueuePairState.ERROR);
    }
    try (Loopback l = stalled(3)) {
      l.b.close();
      assertOnly(l.pollAtLeast(1), 3, Status.RETRY_EXC_ERR);
    }
  }

  @Test
  void xrcSendsStallOnTheTargetSrqAndFailWhenItIsDestroyed() {
    try (Parts p = new Parts()) {
      XrcDomain xrcd = p.add(context.openXrcDomain(XrcDomainOptions.privateDomain()));
      SharedReceiveQueue srq = p.add(xrcd.createSharedReceiveQueue(p.pd, p.cq, SharedReceiveQueueOptions.of(8)));
      QueuePair target = p.add(xrcd.createReceiveQueuePair());
      QueuePair sender = p.add(p.pd.createQueuePair(QueuePairOptions.reliable(p.cq, 8).withType(QueuePairType.XRC_SEND)));
      QueuePairConnectOptions o = rnr(FOREVER, 1);
      target.connect(sender.localAddress(o), o);
      sender.connect(target.localAddress(o), o);
      put(p.memory, 0, "over-xrc");
      sender.postSend(new SendRequest().send(1, p.mr, 0, 8).remoteSrqNumber(srq.srqNumber()));
      sender.postSend(new SendRequest().send(2, p.mr, 0, 8).remoteSrqNumber(srq.srqNumber()));
      assertThat(p.poller.pollAtLeast(0)).isEmpty();
      srq.postReceive(new ReceiveRequest().set(55, p.mr, 4096, 64));
      assertThat(ids(p.poller.pollAtLeast(2))).containsExactly(55L, 1L);
      assertThat(get(p.memory, 4096, 8)).isEqualTo("over-xrc");
      srq.close(); // send 2 still waits on it: its number now names nothing
      assertOnly(p.poller.pollAtLeast(1), 2, Status.REM_INV_REQ_ERR);
      assertThat(sender.state()).isEqualTo(QueuePairState.ERROR);
    }
  }
}
