package io.rdmareactive.rdma.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.AlreadyExistsException;
import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.ResourceBusyException;
import io.rdmareactive.rdma.ResourceClosedException;
import io.rdmareactive.rdma.UnsupportedByDeviceException;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.MemoryWindow;
import io.rdmareactive.rdma.verbs.ParentDomain;
import io.rdmareactive.rdma.verbs.PortAttributes;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.QueuePairConnectOptions;
import io.rdmareactive.rdma.verbs.QueuePairOptions;
import io.rdmareactive.rdma.verbs.QueuePairState;
import io.rdmareactive.rdma.verbs.QueuePairType;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.ReceiveBatch;
import io.rdmareactive.rdma.verbs.ReceiveRequest;
import io.rdmareactive.rdma.verbs.SendBatch;
import io.rdmareactive.rdma.verbs.SendRequest;
import io.rdmareactive.rdma.verbs.SharedReceiveQueue;
import io.rdmareactive.rdma.verbs.SharedReceiveQueueOptions;
import io.rdmareactive.rdma.verbs.ThreadDomain;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import io.rdmareactive.rdma.verbs.WorkCompletion.Status;
import io.rdmareactive.rdma.verbs.XrcDomain;
import io.rdmareactive.rdma.verbs.XrcDomainOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Verbs semantics every provider must show. Subclass with the provider's hooks. */
public abstract class AbstractVerbsConformanceTest extends ConformanceHooks {
  protected RdmaContext context;

  @BeforeEach
  void open() {
    context = openContext();
  }

  @AfterEach
  void closeContext() {
    context.close();
  }

  private QueuePairConnectOptions connect() {
    return QueuePairConnectOptions.defaults().withGidIndex(gidIndex());
  }

  private Loopback loopback(int depth) {
    return new Loopback(context, gidIndex(), depth, false, connect());
  }

  private static void put(MemorySegment m, long offset, String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    MemorySegment.copy(b, 0, m, ValueLayout.JAVA_BYTE, offset, b.length);
  }

  private static String get(MemorySegment m, long offset, int length) {
    return new String(m.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
  }

  @Test
  void queriesDescribeTheDeviceAndRejectBadPorts() {
    assertThat(context.queryDevice().maxQueuePairWorkRequests()).isPositive();
    assertThat(context.queryDevice().supportsXrc()).isEqualTo(supportsXrc());
    assertThat(context.queryPort(1).state()).isEqualTo(PortAttributes.PortState.ACTIVE);
    assertThat(context.queryGid(1, gidIndex())).hasSize(16);
    assertThatThrownBy(() -> context.queryPort(99)).isInstanceOf(NativeCallException.class)
        .hasMessageContaining("ibv_query_port");
  }

  @Test
  void sendLandsInThePostedReceiveWithItsLengthAndImmediate() {
    try (Loopback l = loopback(16)) {
      put(l.memory, 0, "hello rdma");
      l.receiveOnB(100, 1024, 64);
      l.receiveOnB(101, 2048, 64);
      SendRequest send = new SendRequest();
      l.a.postSend(send.send(1, l.mr, 0, 10));
      l.a.postSend(send.send(2, l.mr, 0, 5).opcode(SendRequest.Opcode.SEND_WITH_IMM).immediate(0xCAFE));
      List<WorkCompletion> wcs = l.pollAtLeast(4);
      assertThat(wcs).allMatch(WorkCompletion::isSuccess);
      WorkCompletion first = wcs.stream().filter(w -> w.wrId() == 100).findFirst().orElseThrow();
      WorkCompletion second = wcs.stream().filter(w -> w.wrId() == 101).findFirst().orElseThrow();
      assertThat(first.opcode()).isEqualTo(WorkCompletion.Opcode.RECV);
      assertThat(first.byteLength()).isEqualTo(10);
      assertThat(first.qpNumber()).isEqualTo(l.b.qpNumber());
      assertThat(first.hasImmediate()).isFalse();
      assertThat(second.byteLength()).isEqualTo(5);
      assertThat(second.hasImmediate()).isTrue();
      assertThat(second.immediateData()).isEqualTo(0xCAFE);
      assertThat(wcs).filteredOn(w -> w.wrId() == 1 || w.wrId() == 2)
          .extracting(WorkCompletion::opcode).containsOnly(WorkCompletion.Opcode.SEND);
      assertThat(get(l.memory, 1024, 10)).isEqualTo("hello rdma");
      assertThat(get(l.memory, 2048, 5)).isEqualTo("hello");
    }
  }

  @Test
  void rdmaWriteAndReadMoveBytesWithoutReceives() {
    try (Loopback l = loopback(16)) {
      put(l.memory, 0, "written");
      SendRequest req = new SendRequest();
      l.a.postSend(req.write(1, l.mr, 0, 7, l.mr.address() + 4096, l.mr.remoteKey()));
      assertThat(l.pollAtLeast(1)).singleElement().satisfies(w -> {
        assertThat(w.status()).isEqualTo(Status.SUCCESS);
        assertThat(w.opcode()).isEqualTo(WorkCompletion.Opcode.RDMA_WRITE);
      });
      assertThat(get(l.memory, 4096, 7)).isEqualTo("written");
      l.a.postSend(req.read(2, l.mr, 8192, 7, l.mr.address() + 4096, l.mr.remoteKey()));
      assertThat(l.pollAtLeast(1)).singleElement().satisfies(w -> {
        assertThat(w.status()).isEqualTo(Status.SUCCESS);
        assertThat(w.opcode()).isEqualTo(WorkCompletion.Opcode.RDMA_READ);
        assertThat(w.byteLength()).isEqualTo(7);
      });
      assertThat(get(l.memory, 8192, 7)).isEqualTo("written");
    }
  }

  @Test
  void writeWithImmediateConsumesAReceive() {
    try (Loopback l = loopback(16)) {
      l.receiveOnB(7, 0, 16);
      SendRequest req = new SendRequest().write(1, l.mr, 0, 32, l.mr.address() + 100, l.mr.remoteKey())
          .opcode(SendRequest.Opcode.RDMA_WRITE_WITH_IMM).immediate(42);
      l.a.postSend(req);
      List<WorkCompletion> wcs = l.pollAtLeast(2);
      assertThat(wcs).filteredOn(w -> w.wrId() == 7).singleElement().satisfies(w -> {
        assertThat(w.opcode()).isEqualTo(WorkCompletion.Opcode.RECV_RDMA_WITH_IMM);
        assertThat(w.immediateData()).isEqualTo(42);
        assertThat(w.byteLength()).isEqualTo(32);
      });
    }
  }

  @Test
  void unsignaledSendsCompleteSilently() {
    try (Loopback l = loopback(16)) {
      SendRequest req = new SendRequest();
      l.a.postSend(req.write(1, l.mr, 0, 8, l.mr.address() + 64, l.mr.remoteKey()).flags(0));
      l.a.postSend(req.write(2, l.mr, 0, 8, l.mr.address() + 64, l.mr.remoteKey()));
      assertThat(l.pollAtLeast(1)).extracting(WorkCompletion::wrId).containsExactly(2L);
      assertThat(l.pollAvailable(50)).isEmpty();
    }
  }

  @Test
  void messageLargerThanTheReceiveBufferFailsBothSides() {
    try (Loopback l = loopback(16)) {
      l.receiveOnB(9, 0, 16);
      l.a.postSend(new SendRequest().send(1, l.mr, 0, 64));
      List<WorkCompletion> wcs = l.pollAtLeast(2);
      // The verbs spec says LOC_LEN_ERR (mlx5, in-memory); rxe reports LOC_QP_OP_ERR (its copy
      // into the too-short buffer fails as a malformed WQE).
      assertThat(wcs).filteredOn(w -> w.wrId() == 9).singleElement()
          .extracting(WorkCompletion::status).isIn(Status.LOC_LEN_ERR, Status.LOC_QP_OP_ERR);
      assertThat(wcs).filteredOn(w -> w.wrId() == 1).singleElement()
          .extracting(WorkCompletion::isSuccess).isEqualTo(false);
      assertThat(l.b.state()).isEqualTo(QueuePairState.ERROR);
    }
  }

  @Test
  void writingMemoryWithoutRemoteAccessFailsWithRemoteAccessError() {
    try (Loopback l = loopback(16); Arena arena = Arena.ofConfined()) {
      MemoryRegion local = l.pd.registerMemory(arena.allocate(4096), Access.local());
      try {
        l.a.postSend(new SendRequest().write(1, l.mr, 0, 8, local.address(), local.remoteKey()));
        assertThat(l.pollAtLeast(1)).singleElement().extracting(WorkCompletion::status)
            .isEqualTo(Status.REM_ACCESS_ERR);
        assertThat(l.a.state()).isEqualTo(QueuePairState.ERROR);
      } finally {
        local.close();
      }
    }
  }

  @Test
  void sendingFromOutsideARegionFailsWithLocalProtectionError() {
    try (Loopback l = loopback(16)) {
      l.receiveOnB(1, 0, 64);
      SendRequest bad = new SendRequest();
      bad.reset(5, SendRequest.Opcode.SEND).scatterGather().add(l.mr.address() + Loopback.BUFFER - 4, 64,
          l.mr.localKey());
      l.a.postSend(bad);
      assertThat(l.pollAtLeast(1)).filteredOn(w -> w.wrId() == 5).singleElement()
          .extracting(WorkCompletion::status).isEqualTo(Status.LOC_PROT_ERR);
    }
  }

  /** The lkey of a region on another protection domain names nothing for this QP, as the device checks it. */
  @Test
  void sendingFromAnotherProtectionDomainsMemoryFailsWithLocalProtectionError() {
    try (Loopback l = loopback(16); Arena arena = Arena.ofConfined()) {
      ProtectionDomain other = context.allocateProtectionDomain();
      MemoryRegion foreign = other.registerMemory(arena.allocate(4096, 64), Access.local());
      try {
        l.receiveOnB(1, 0, 64);
        l.a.postSend(new SendRequest().send(6, foreign, 0, 64));
        // The verbs spec says LOC_PROT_ERR (in-memory); rxe reports LOC_QP_OP_ERR (the key's
        // lookup in the QP's PD fails while it builds the packet, as a malformed WQE would).
        assertThat(l.pollAtLeast(1)).filteredOn(w -> w.wrId() == 6).singleElement()
            .extracting(WorkCompletion::status).isIn(Status.LOC_PROT_ERR, Status.LOC_QP_OP_ERR);
      } finally {
        foreign.close();
        other.close();
      }
    }
  }

  @Test
  void sendWithoutAPostedReceiveFailsWithRnrWhenRetriesAreExhausted() {
    try (Loopback l = new Loopback(context, gidIndex(), 16, false, connect().withRnrRetry(0))) {
      l.a.postSend(new SendRequest().send(3, l.mr, 0, 8));
      assertThat(l.pollAtLeast(1)).singleElement().extracting(WorkCompletion::status)
          .isEqualTo(Status.RNR_RETRY_EXC_ERR);
      assertThat(l.a.state()).isEqualTo(QueuePairState.ERROR);
    }
  }

  @Test
  void toErrorFlushesPostedReceives() {
    try (Loopback l = loopback(16)) {
      l.receiveOnB(1, 0, 8);
      l.receiveOnB(2, 8, 8);
      l.b.toError();
      assertThat(l.pollAtLeast(2)).extracting(WorkCompletion::wrId, WorkCompletion::status)
          .containsExactly(org.assertj.core.groups.Tuple.tuple(1L, Status.WR_FLUSH_ERR),
              org.assertj.core.groups.Tuple.tuple(2L, Status.WR_FLUSH_ERR));
    }
  }

  @Test
  void parentsWithLiveChildrenRefuseToCloseAndStayUsable() {
    ProtectionDomain pd = context.allocateProtectionDomain();
    try (Arena arena = Arena.ofConfined()) {
      MemoryRegion mr = pd.registerMemory(arena.allocate(4096), Access.local());
      assertThatThrownBy(pd::close).isInstanceOf(ResourceBusyException.class)
          .satisfies(e -> assertThat(((ResourceBusyException) e).errno()).isEqualTo(NativeCallException.EBUSY));
      assertThat(pd.isClosed()).isFalse();
      assertThatThrownBy(context::close).isInstanceOf(ResourceBusyException.class);
      mr.close();
    }
    pd.close();
    CompletionChannel channel = context.createCompletionChannel();
    CompletionQueue cq = context.createCompletionQueue(8, channel);
    assertThatThrownBy(channel::close).isInstanceOf(ResourceBusyException.class);
    ProtectionDomain pd2 = context.allocateProtectionDomain();
    QueuePair qp = pd2.createQueuePair(QueuePairOptions.reliable(cq, 4));
    assertThatThrownBy(cq::close).isInstanceOf(ResourceBusyException.class);
    assertThatThrownBy(pd2::close).isInstanceOf(ResourceBusyException.class);
    qp.close();
    pd2.close();
    cq.close();
    channel.close();
  }

  /** The same rules on every provider, checked before any native call (AbstractMemoryRegion.checkRegistration). */
  @Test
  void registerMemoryChecksItsArgumentsAlikeOnEveryProvider() {
    ProtectionDomain pd = context.allocateProtectionDomain();
    try (Arena arena = Arena.ofConfined()) {
      assertThatThrownBy(() -> pd.registerMemory(MemorySegment.ofArray(new byte[16]), Access.local()))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("heap");
      MemorySegment gone;
      try (Arena closed = Arena.ofConfined()) {
        gone = closed.allocate(64);
      }
      assertThatThrownBy(() -> pd.registerMemory(gone, Access.local()))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("arena is already closed");
      assertThatThrownBy(() -> pd.registerMemory(arena.allocate(64).asSlice(0, 0), Access.local()))
          .isInstanceOfSatisfying(NativeCallException.class, e -> {
            assertThat(e.errno()).isEqualTo(NativeCallException.EINVAL);
            assertThat(e.function()).isEqualTo("ibv_reg_mr");
          });
      assertThatThrownBy(() -> pd.registerMemory(arena.allocate(64), Set.of(Access.REMOTE_WRITE)))
          .isInstanceOfSatisfying(NativeCallException.class,
              e -> assertThat(e.errno()).isEqualTo(NativeCallException.EINVAL))
          .hasMessageContaining("LOCAL_WRITE");
      MemorySegment memory = arena.allocate(64);
      MemoryRegion mr = pd.registerMemory(memory, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
      assertThat(mr.address()).isEqualTo(memory.address());
      assertThat(mr.length()).isEqualTo(64);
      assertThat(mr.access()).containsExactlyInAnyOrder(Access.LOCAL_WRITE, Access.REMOTE_READ);
      mr.close();
      assertThatThrownBy(mr::localKey).as("keys of a deregistered region").isInstanceOf(ResourceClosedException.class);
      assertThatThrownBy(mr::segment).isInstanceOf(ResourceClosedException.class);
      assertThatThrownBy(mr::address).isInstanceOf(ResourceClosedException.class);
    } finally {
      pd.close();
    }
    assertThatThrownBy(() -> pd.registerMemory(MemorySegment.ofArray(new byte[16]), Access.local()))
        .as("a closed PD fails first").isInstanceOf(ResourceClosedException.class);
  }

  @Test
  void useAfterCloseFailsCleanlyAndCloseIsIdempotent() {
    ProtectionDomain pd = context.allocateProtectionDomain();
    CompletionQueue cq = context.createCompletionQueue(8, null);
    pd.close();
    pd.close();
    cq.close();
    assertThat(pd.isClosed()).isTrue();
    assertThatThrownBy(() -> pd.createQueuePair(QueuePairOptions.reliable(cq, 1)))
        .isInstanceOf(ResourceClosedException.class);
    assertThatThrownBy(() -> cq.poll(1, wc -> {})).isInstanceOf(ResourceClosedException.class);
    assertThatThrownBy(() -> cq.requestNotification(false)).isInstanceOf(ResourceClosedException.class);
  }

  @Test
  void queuePairsDeeperThanTheirCompletionQueueAreRejected() {
    CompletionQueue cq = context.createCompletionQueue(16, null);
    ProtectionDomain pd = context.allocateProtectionDomain();
    try {
      int depth = cq.depth(); // at least 16: devices may round up (rxe: 31)
      assertThat(depth).isBetween(16, 63);
      assertThatThrownBy(() -> pd.createQueuePair(QueuePairOptions.reliable(cq, 64)))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(String.valueOf(depth));
      int half = depth / 2; // an RC QP of n takes 2n entries (n sends, n receives)
      QueuePair fits = pd.createQueuePair(QueuePairOptions.reliable(cq, half));
      assertThatThrownBy(() -> pd.createQueuePair(QueuePairOptions.reliable(cq, 1)))
          .as("the first QP took %d of %d entries", 2 * half, depth).isInstanceOf(IllegalArgumentException.class);
      fits.close();
      pd.createQueuePair(QueuePairOptions.reliable(cq, half)).close();
    } finally {
      pd.close();
      cq.close();
    }
  }

  @Test
  void channelEventsAreOneShotAndCounted() {
    try (Loopback l = new Loopback(context, gidIndex(), 16, true, connect())) {
      CompletionChannel channel = l.channel;
      l.cq.requestNotification(false);
      l.write(1);
      assertThat(channel.awaitEvent(Duration.ofSeconds(5))).isTrue();
      assertThat(channel.nextEvent()).isSameAs(l.cq);
      assertThat(channel.nextEvent()).as("one event per arm").isNull();
      l.write(2);
      assertThat(channel.awaitEvent(Duration.ofMillis(200))).as("not re-armed: no event").isFalse();
      l.cq.acknowledgeEvents(1);
      assertThat(l.pollAtLeast(2)).extracting(WorkCompletion::wrId).containsExactly(1L, 2L);
    }
  }

  @Test
  void sharedReceiveQueueFeedsSeveralQueuePairs() {
    ProtectionDomain pd = context.allocateProtectionDomain();
    CompletionQueue cq = context.createCompletionQueue(64, null);
    SharedReceiveQueue srq = pd.createSharedReceiveQueue(SharedReceiveQueueOptions.of(8));
    try (Arena arena = Arena.ofConfined()) {
      MemoryRegion mr = pd.registerMemory(arena.allocate(4096), Access.remote());
      QueuePair a = pd.createQueuePair(QueuePairOptions.reliable(cq, 4));
      QueuePair b = pd.createQueuePair(QueuePairOptions.reliable(cq, 4).withSharedReceiveQueue(srq));
      a.connect(b.localAddress(connect()), connect());
      b.connect(a.localAddress(connect()), connect());
      assertThatThrownBy(srq::close).isInstanceOf(ResourceBusyException.class);
      srq.postReceive(new ReceiveRequest().set(77, mr, 512, 64));
      a.postSend(new SendRequest().send(1, mr, 0, 16));
      List<WorkCompletion> wcs = new Loopback.Poller(cq).pollAtLeast(2);
      assertThat(wcs).filteredOn(w -> w.wrId() == 77).singleElement().satisfies(w -> {
        assertThat(w.isSuccess()).isTrue();
        assertThat(w.qpNumber()).isEqualTo(b.qpNumber());
      });
      a.close();
      b.close();
      mr.close();
    } finally {
      srq.close();
      cq.close();
      pd.close();
    }
  }

  @Test
  void xrcDomainsAreSharedByInodeOrCleanlyUnsupported(@TempDir Path dir) {
    Path file = dir.resolve("xrcd");
    if (!supportsXrc()) {
      assertThatThrownBy(() -> context.openXrcDomain(XrcDomainOptions.shared(file)))
          .isInstanceOf(UnsupportedByDeviceException.class)
          .satisfies(e -> assertThat(((NativeCallException) e).errno()).isEqualTo(NativeCallException.EOPNOTSUPP));
      return;
    }
    XrcDomain first = context.openXrcDomain(XrcDomainOptions.shared(file));
    XrcDomain second = context.openXrcDomain(XrcDomainOptions.existing(file));
    assertThatThrownBy(() -> context.openXrcDomain(XrcDomainOptions.exclusive(file)))
        .isInstanceOf(AlreadyExistsException.class)
        .satisfies(e -> assertThat(((NativeCallException) e).errno()).isEqualTo(NativeCallException.EEXIST));
    XrcDomain priv = context.openXrcDomain(XrcDomainOptions.privateDomain());
    priv.close();
    second.close();
    first.close();
  }

  @Test
  void xrcSendsReachTheTargetSharedReceiveQueueByNumber() {
    if (!supportsXrc()) {
      assertThatThrownBy(() -> context.openXrcDomain(XrcDomainOptions.privateDomain()))
          .isInstanceOf(UnsupportedByDeviceException.class);
      return;
    }
    ProtectionDomain pd = context.allocateProtectionDomain();
    CompletionQueue cq = context.createCompletionQueue(64, null);
    XrcDomain xrcd = context.openXrcDomain(XrcDomainOptions.privateDomain());
    try (Arena arena = Arena.ofConfined()) {
      MemoryRegion mr = pd.registerMemory(arena.allocate(4096), Access.remote());
      SharedReceiveQueue srq = xrcd.createSharedReceiveQueue(pd, cq, SharedReceiveQueueOptions.of(8));
      QueuePair target = xrcd.createReceiveQueuePair();
      QueuePair opened = xrcd.openQueuePair(target.qpNumber());
      QueuePair sender = pd.createQueuePair(QueuePairOptions.reliable(cq, 8).withType(QueuePairType.XRC_SEND));
      assertThat(target.type()).isEqualTo(QueuePairType.XRC_RECV);
      assertThat(opened.qpNumber()).isEqualTo(target.qpNumber());
      assertThat(srq.srqNumber()).isNotNegative();
      target.connect(sender.localAddress(connect()), connect());
      sender.connect(target.localAddress(connect()), connect());
      assertThatThrownBy(xrcd::close).isInstanceOf(ResourceBusyException.class);
      srq.postReceive(new ReceiveRequest().set(55, mr, 1024, 64));
      sender.postSend(new SendRequest().send(1, mr, 0, 16).remoteSrqNumber(srq.srqNumber()));
      List<WorkCompletion> wcs = new Loopback.Poller(cq).pollAtLeast(2);
      assertThat(wcs).extracting(WorkCompletion::wrId).containsExactlyInAnyOrder(1L, 55L);
      assertThat(wcs).allMatch(WorkCompletion::isSuccess);
      sender.close();
      opened.close();
      target.close();
      srq.close();
      mr.close();
    } finally {
      xrcd.close();
      cq.close();
      pd.close();
    }
  }

  @Test
  void parentDomainsWorkAsProtectionDomainsOrAreCleanlyUnsupported() {
    if (!supportsThreadDomains()) {
      assertThatThrownBy(context::allocateThreadDomain).isInstanceOf(UnsupportedByDeviceException.class)
          .satisfies(e -> assertThat(((NativeCallException) e).errno()).isEqualTo(NativeCallException.EOPNOTSUPP));
      return;
    }
    ThreadDomain td = context.allocateThreadDomain();
    ProtectionDomain pd = context.allocateProtectionDomain();
    ParentDomain parent = pd.allocateParentDomain(td);
    CompletionQueue cq = context.createCompletionQueue(16, null);
    try (Arena arena = Arena.ofConfined()) {
      assertThat(parent.protectionDomain()).isSameAs(pd);
      assertThat(parent.threadDomain()).isSameAs(td);
      MemoryRegion mr = parent.registerMemory(arena.allocate(4096), Access.local());
      QueuePair qp = parent.createQueuePair(QueuePairOptions.reliable(cq, 4));
      assertThatThrownBy(td::close).isInstanceOf(ResourceBusyException.class);
      assertThatThrownBy(pd::close).isInstanceOf(ResourceBusyException.class);
      qp.close();
      mr.close();
    } finally {
      cq.close();
      parent.close();
      pd.close();
      td.close();
    }
  }

  /** Two connected RC QPs, each with its own CQ, so a poll on one side never takes the other's completions. */
  private final class TwoCqs implements AutoCloseable {
    final ProtectionDomain pd = context.allocateProtectionDomain();
    final CompletionQueue cqA;
    final CompletionQueue cqB;
    final Arena arena = Arena.ofConfined();
    final MemoryRegion mr;
    final QueuePair a;
    final QueuePair b;

    TwoCqs(int depth) {
      cqA = context.createCompletionQueue(2 * depth, null);
      cqB = context.createCompletionQueue(2 * depth, null);
      mr = pd.registerMemory(arena.allocate(64 * 1024, 64), Access.remote());
      a = pd.createQueuePair(QueuePairOptions.reliable(cqA, depth));
      b = pd.createQueuePair(QueuePairOptions.reliable(cqB, depth));
      a.connect(b.localAddress(connect()), connect());
      b.connect(a.localAddress(connect()), connect());
    }

    @Override
    public void close() {
      a.close();
      b.close();
      mr.close();
      cqA.close();
      cqB.close();
      pd.close();
      arena.close();
    }
  }

  private static void assertQueueFull(Runnable post, String function) {
    assertThatThrownBy(post::run).isInstanceOf(NativeCallException.class)
        .hasMessageContaining(function)
        .satisfies(e -> assertThat(((NativeCallException) e).errno()).isEqualTo(NativeCallException.ENOMEM));
  }

  @Test
  void aFullSendQueueRefusesPostsUntilCompletionsArePolled() {
    int depth = 8;
    try (TwoCqs t = new TwoCqs(depth)) {
      ReceiveRequest receive = new ReceiveRequest();
      for (int i = 0; i < depth; i++) {
        t.b.postReceive(receive.set(100 + i, t.mr, 1024 + 64L * i, 64));
      }
      assertQueueFull(() -> t.b.postReceive(receive.set(199, t.mr, 0, 64)), "ibv_post_recv");
      SendRequest send = new SendRequest();
      for (int i = 0; i < depth; i++) {
        t.a.postSend(send.send(i, t.mr, 0, 16));
      }
      // Every send has landed (and the device may have freed its own slots): the sender still
      // holds them, because none of its completions was polled.
      assertThat(new Loopback.Poller(t.cqB).pollAtLeast(depth)).hasSize(depth).allMatch(WorkCompletion::isSuccess);
      assertQueueFull(() -> t.a.postSend(send.send(99, t.mr, 0, 16)), "ibv_post_send");
      t.b.postReceive(receive.set(200, t.mr, 0, 64)); // its receives were polled: room again
      assertThat(new Loopback.Poller(t.cqA).pollAtLeast(1)).singleElement().satisfies(w -> {
        assertThat(w.wrId()).isZero();
        assertThat(w.isSuccess()).isTrue();
      });
      t.a.postSend(send.send(8, t.mr, 0, 16));
      assertQueueFull(() -> t.a.postSend(send.send(99, t.mr, 0, 16)), "ibv_post_send");
      assertThat(new Loopback.Poller(t.cqA).pollAtLeast(depth)).extracting(WorkCompletion::wrId)
          .containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L);
      assertThat(new Loopback.Poller(t.cqB).pollAtLeast(1)).extracting(WorkCompletion::wrId).containsExactly(200L);
    }
  }

  @Test
  void pollingASignaledSendFreesTheUnsignaledSendsBeforeIt() {
    int depth = 8;
    try (TwoCqs t = new TwoCqs(depth)) {
      SendRequest write = new SendRequest();
      long target = t.mr.address() + 4096;
      for (int i = 0; i < depth - 1; i++) {
        t.a.postSend(write.write(i, t.mr, 0, 8, target, t.mr.remoteKey()).flags(0));
      }
      t.a.postSend(write.write(50, t.mr, 0, 8, target, t.mr.remoteKey()));
      assertThat(new Loopback.Poller(t.cqA).pollAtLeast(1)).extracting(WorkCompletion::wrId).containsExactly(50L);
      // The whole queue is free again: a queue that kept the unsignaled sends would refuse the 2nd.
      for (int i = 0; i < depth; i++) {
        t.a.postSend(write.write(60 + i, t.mr, 0, 8, target, t.mr.remoteKey()));
      }
      assertThat(new Loopback.Poller(t.cqA).pollAtLeast(depth)).hasSize(depth).allMatch(WorkCompletion::isSuccess);
    }
  }

  @Test
  void unsignaledSendsHoldTheirSlotsUntilALaterCompletionIsPolled() {
    int depth = 8;
    try (TwoCqs t = new TwoCqs(depth)) {
      SendRequest write = new SendRequest();
      long target = t.mr.address() + 4096;
      for (int i = 0; i < depth; i++) {
        t.a.postSend(write.write(i, t.mr, 0, 8, target, t.mr.remoteKey()).flags(0));
      }
      // They completed silently, but nothing polled says so: their slots are still taken.
      assertQueueFull(() -> t.a.postSend(write.write(99, t.mr, 0, 8, target, t.mr.remoteKey())), "ibv_post_send");
      assertThat(available(t.cqA)).isEmpty();
    }
  }

  /** Memory for windows: local access and window binding only, so its own key opens nothing. */
  private static MemoryRegion bindable(Loopback l, Arena arena) {
    MemoryRegion source = l.pd.registerMemory(arena.allocate(8192, 64), EnumSet.of(Access.LOCAL_WRITE, Access.MW_BIND));
    put(source.segment(), 1000, "window bytes");
    return source;
  }

  /** What a window test does with its loopback, its bindable region and its window. */
  private interface WindowTest {
    void run(Loopback l, MemoryRegion source, MemoryWindow window);
  }

  /** Runs {@code test} with a loopback, a region from {@link #bindable} and a window, closing them after. */
  private void withWindow(WindowTest test) {
    try (Loopback l = loopback(16); Arena arena = Arena.ofConfined()) {
      MemoryRegion source = bindable(l, arena);
      MemoryWindow window = l.pd.allocateMemoryWindow();
      try {
        test.run(l, source, window);
      } finally {
        window.close();
        source.close();
      }
    }
  }

  /** Binds {@code window} through b to the 12 bytes at 1000 of {@code source}, remote read; returns its key. */
  private static int bindOnB(Loopback l, MemoryWindow window, MemoryRegion source) {
    SendRequest bind = new SendRequest().bind(1, window, source, 1000, 12, Set.of(Access.REMOTE_READ));
    l.b.postSend(bind);
    assertThat(l.pollAtLeast(1)).singleElement().satisfies(w -> {
      assertThat(w.status()).isEqualTo(Status.SUCCESS);
      assertThat(w.opcode()).isEqualTo(WorkCompletion.Opcode.BIND_MW);
    });
    assertThat(window.remoteKey()).isEqualTo(bind.bindKey());
    return bind.bindKey();
  }

  private static Status readStatus(Loopback l, long address, int length, int rkey) {
    l.a.postSend(new SendRequest().read(9, l.mr, 0, length, address, rkey));
    List<WorkCompletion> wcs = l.pollAtLeast(1);
    assertThat(wcs).hasSize(1);
    return wcs.get(0).status();
  }

  @Test
  void aMemoryWindowOpensItsBoundRangeToThePeerUntilInvalidated() {
    withWindow((l, source, window) -> {
      int allocated = window.remoteKey();
      int key = bindOnB(l, window, source);
      assertThat(key).isEqualTo(MemoryWindow.nextKey(allocated)).isNotEqualTo(allocated);
      assertThat(readStatus(l, source.address() + 1000, 12, key)).isEqualTo(Status.SUCCESS);
      assertThat(get(l.memory, 0, 12)).isEqualTo("window bytes");
      assertThat(readStatus(l, source.address() + 1007, 5, key)).isEqualTo(Status.SUCCESS);
      assertThat(get(l.memory, 0, 5)).isEqualTo("bytes");
      l.b.postSend(new SendRequest().invalidate(2, key));
      assertThat(l.pollAtLeast(1)).singleElement().satisfies(w -> {
        assertThat(w.status()).isEqualTo(Status.SUCCESS);
        assertThat(w.opcode()).isEqualTo(WorkCompletion.Opcode.LOCAL_INV);
    });
    assertThat(readStatus(l, source.address() + 1000, 12, key)).isEqualTo(Status.REM_ACCESS_ERR);
    assertThat(l.a.state()).isEqualTo(QueuePairState.ERROR);
    });
  }

  @Test
  void readingOneByteBeyondAMemoryWindowFailsWithRemoteAccessError() {
    withWindow((l, source, window) -> {
      int key = bindOnB(l, window, source);
      if (!windowsEnforceTheirRange()) {
        // The device's known defect, asserted so that a fixed kernel shows here (see the hook).
        assertThat(readStatus(l, source.address() + 1000, 13, key)).as("a READ one byte beyond the window")
            .isEqualTo(Status.SUCCESS);
        return;
      }
      assertThat(readStatus(l, source.address() + 1000, 13, key)).isEqualTo(Status.REM_ACCESS_ERR);
      assertThat(get(l.memory, 0, 12)).isNotEqualTo("window bytes");
    });
  }

  /** What the rendezvous falls back to where windows do not confine: a registration of exactly the message. */
  @Test
  void readingOneByteBeyondARegistrationOfARangeFailsWithRemoteAccessError() {
    try (Loopback l = loopback(16); Arena arena = Arena.ofConfined()) {
      MemorySegment memory = arena.allocate(8192, 64);
      put(memory, 1000, "window bytes");
      MemoryRegion range = l.pd.registerMemory(memory.asSlice(1000, 12), Set.of(Access.REMOTE_READ));
      try {
        assertThat(readStatus(l, range.address(), 12, range.remoteKey())).isEqualTo(Status.SUCCESS);
        assertThat(get(l.memory, 0, 12)).isEqualTo("window bytes");
        assertThat(readStatus(l, range.address(), 13, range.remoteKey())).isEqualTo(Status.REM_ACCESS_ERR);
      } finally {
        range.close();
      }
    }
  }

  @Test
  void aRegionsOwnKeyOpensNothingWhileAWindowOverItIsBound() {
    withWindow((l, source, window) -> {
      bindOnB(l, window, source);
      assertThat(readStatus(l, source.address() + 1000, 12, source.remoteKey())).isEqualTo(Status.REM_ACCESS_ERR);
    });
  }

  @Test
  void bindingAWindowToARegionWithoutBindAccessFails() {
    try (Loopback l = loopback(16); Arena arena = Arena.ofConfined()) {
      MemoryRegion plain = l.pd.registerMemory(arena.allocate(4096, 64), EnumSet.of(Access.LOCAL_WRITE));
      MemoryWindow window = l.pd.allocateMemoryWindow();
      try {
        l.b.postSend(new SendRequest().bind(1, window, plain, 0, 64, Set.of(Access.REMOTE_READ)));
        assertThat(l.pollAtLeast(1)).singleElement().extracting(WorkCompletion::status).isEqualTo(Status.MW_BIND_ERR);
      } finally {
        window.close();
        plain.close();
      }
    }
  }

  @Test
  void memoryWindowsCloseAfterTheirQueuePairOnceAndRefuseUseAfterClose() {
    withWindow((l, source, window) -> {
      assertThat(window.protectionDomain()).isSameAs(l.pd);
      bindOnB(l, window, source);
      assertThatThrownBy(l.pd::close).isInstanceOf(ResourceBusyException.class);
      l.b.close(); // the QP that bound it goes first
      window.close();
      window.close();
      assertThat(window.isClosed()).isTrue();
      SendRequest bind = new SendRequest().bind(3, window, source, 0, 64, Set.of(Access.REMOTE_READ));
      assertThatThrownBy(() -> l.a.postSend(bind)).isInstanceOf(ResourceClosedException.class);
    });
  }

  @Test
  void aListOfSendsAndOneOfReceivesArePostedInOrderAtOnce() {
    int depth = 8;
    try (TwoCqs t = new TwoCqs(depth)) {
      ReceiveBatch receives = new ReceiveBatch(5, 1);
      for (int i = 0; i < 5; i++) {
        receives.add().set(100 + i, t.mr, 1024 + 64L * i, 64);
      }
      t.b.postReceive(receives);
      assertThat(receives.posted()).isEqualTo(5);
      SendBatch sends = new SendBatch(5, 1);
      for (int i = 0; i < 5; i++) {
        t.mr.segment().set(ValueLayout.JAVA_BYTE, 8L * i, (byte) (i + 1));
        sends.add().send(i, t.mr, 8L * i, 8).flags(i == 4 ? SendRequest.SIGNALED : 0);
      }
      t.a.postSend(sends);
      assertThat(sends.posted()).isEqualTo(5);
      // One completion for the list: its last, signaled request's; the peer received all, in order.
      assertThat(new Loopback.Poller(t.cqA).pollAtLeast(1)).singleElement().satisfies(w -> {
        assertThat(w.wrId()).isEqualTo(4L);
        assertThat(w.isSuccess()).isTrue();
      });
      assertThat(new Loopback.Poller(t.cqB).pollAtLeast(5)).extracting(WorkCompletion::wrId)
          .containsExactly(100L, 101L, 102L, 103L, 104L);
      for (int i = 0; i < 5; i++) {
        assertThat(t.mr.segment().get(ValueLayout.JAVA_BYTE, 1024 + 64L * i)).isEqualTo((byte) (i + 1));
      }
      assertThat(available(t.cqA)).isEmpty();
    }
  }

  @Test
  void aListThatOverrunsTheQueuePostsThePartBeforeAndSaysHowMany() {
    int depth = 4;
    try (TwoCqs t = new TwoCqs(depth)) {
      ReceiveBatch receives = new ReceiveBatch(depth + 2, 1);
      for (int i = 0; i < depth + 2; i++) {
        receives.add().set(100 + i, t.mr, 1024 + 64L * i, 64);
      }
      assertQueueFull(() -> t.b.postReceive(receives), "ibv_post_recv");
      assertThat(receives.posted()).isEqualTo(depth);
      SendBatch writes = new SendBatch(depth + 2, 1);
      long target = t.mr.address() + 4096;
      for (int i = 0; i < depth + 2; i++) {
        writes.add().write(i, t.mr, 0, 8, target, t.mr.remoteKey());
      }
      assertQueueFull(() -> t.a.postSend(writes), "ibv_post_send");
      assertThat(writes.posted()).isEqualTo(depth);
      assertThat(new Loopback.Poller(t.cqA).pollAtLeast(depth)).extracting(WorkCompletion::wrId)
          .containsExactly(0L, 1L, 2L, 3L);
      assertThat(available(t.cqA)).as("the requests not taken never complete").isEmpty();
    }
  }

  /**
   * A list of one request (the native provider posts it alone, with no chain) behaves as any list:
   * taken, it reads as posted and completes; refused by a full queue, it reads as not posted, says
   * which function failed, and leaves the queue as it was.
   */
  @Test
  void aListOfOneIsPostedOrRefusedAsAnyList() {
    int depth = 4;
    try (TwoCqs t = new TwoCqs(depth)) {
      ReceiveBatch one = new ReceiveBatch(1, 1);
      one.add().set(100, t.mr, 1024, 64);
      t.b.postReceive(one);
      assertThat(one.posted()).isEqualTo(1);
      SendBatch send = new SendBatch(1, 1);
      t.mr.segment().set(ValueLayout.JAVA_BYTE, 0, (byte) 42);
      send.add().send(7, t.mr, 0, 8);
      t.a.postSend(send);
      assertThat(send.posted()).isEqualTo(1);
      assertThat(new Loopback.Poller(t.cqA).pollAtLeast(1)).extracting(WorkCompletion::wrId).containsExactly(7L);
      assertThat(new Loopback.Poller(t.cqB).pollAtLeast(1)).extracting(WorkCompletion::wrId).containsExactly(100L);
      assertThat(t.mr.segment().get(ValueLayout.JAVA_BYTE, 1024)).isEqualTo((byte) 42);

      ReceiveBatch fill = new ReceiveBatch(depth, 1);
      for (int i = 0; i < depth; i++) {
        fill.add().set(200 + i, t.mr, 2048 + 64L * i, 64);
      }
      t.b.postReceive(fill);
      one.clear();
      one.add().set(300, t.mr, 1024, 64);
      assertQueueFull(() -> t.b.postReceive(one), "ibv_post_recv");
      assertThat(one.posted()).isZero();
      SendBatch writes = new SendBatch(depth, 1);
      long target = t.mr.address() + 4096;
      for (int i = 0; i < depth; i++) {
        writes.add().write(10 + i, t.mr, 0, 8, target, t.mr.remoteKey());
      }
      t.a.postSend(writes);
      send.clear();
      send.add().write(20, t.mr, 0, 8, target, t.mr.remoteKey());
      assertQueueFull(() -> t.a.postSend(send), "ibv_post_send");
      assertThat(send.posted()).isZero();
      assertThat(new Loopback.Poller(t.cqA).pollAtLeast(depth)).extracting(WorkCompletion::wrId)
          .containsExactly(10L, 11L, 12L, 13L);
      assertThat(available(t.cqA)).as("the refused request never completes").isEmpty();
    }
  }

  /** What {@code cq} holds after 50 ms for in-flight work (native) to land. */
  private static List<WorkCompletion> available(CompletionQueue cq) {
    java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
    List<WorkCompletion> out = new java.util.ArrayList<>();
    while (cq.poll(64, wc -> out.add(wc.toWorkCompletion())) > 0) {
      // drain
    }
    return out;
  }
}
