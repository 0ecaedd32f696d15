package io.rdmareactive.rdma.rdmacore;

import static io.rdmareactive.rdma.rdmacore.NativeTestSupport.TIMEOUT;
import static io.rdmareactive.rdma.rdmacore.NativeTestSupport.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.conformance.TestSettings;
import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.device.RdmaDevices;
import io.rdmareactive.rdma.ResourceBusyException;
import io.rdmareactive.rdma.ResourceClosedException;
import io.rdmareactive.rdma.UnsupportedByDeviceException;
import io.rdmareactive.rdma.spi.RdmaProvider;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.DeviceAttributes;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.PortAttributes;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.QueuePairConnectOptions;
import io.rdmareactive.rdma.verbs.QueuePairOptions;
import io.rdmareactive.rdma.verbs.QueuePairState;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.ReceiveRequest;
import io.rdmareactive.rdma.verbs.SendRequest;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import io.rdmareactive.rdma.verbs.XrcDomainOptions;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import reactor.test.StepVerifier;

/** The verbs against a real device (Soft-RoCE rxe0 in scripts/softroce-vm). */
@Tag("native")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class NativeVerbsTest {
  private static final int BUF = 4096;

  @Test
  @Order(1)
  void listsOpensAndQueriesTheDevice() {
    RdmaProvider provider = RdmaDevices.provider("native");
    assertThat(provider.isAvailable()).isTrue();
    String name = NativeTestSupport.deviceName();
    assertThat(provider.devices()).anySatisfy(d -> {
      assertThat(d.name()).isEqualTo(name);
      assertThat(d.provider()).isEqualTo("native");
    });
    RdmaContext ctx = provider.open(name);
    try (ctx) {
      assertThat(ctx.deviceName()).isEqualTo(name);
      assertThat(ctx.providerName()).isEqualTo("native");
      DeviceAttributes dev = ctx.queryDevice();
      assertThat(dev.physicalPortCount()).isGreaterThanOrEqualTo(1);
      assertThat(dev.maxQueuePairs()).isPositive();
      assertThat(dev.maxCompletionQueueEntries()).isPositive();
      assertThat(dev.maxMemoryRegionSize()).isNotZero(); // unsigned: rxe reports ~0
      PortAttributes port = ctx.queryPort(1);
      assertThat(port.state()).isEqualTo(PortAttributes.PortState.ACTIVE);
      assertThat(port.activeMtu()).isBetween(1, 5);
      assertThat(port.gidTableLength()).isPositive();
      int gidIndex = NativeTestSupport.usableGidIndex(ctx);
      byte[] gid = ctx.queryGid(1, gidIndex);
      assertThat(gid).hasSize(16);
      assertThat(NativeTestSupport.isZero(gid)).isFalse();
      if (port.linkLayer() == PortAttributes.LinkLayer.ETHERNET && TestSettings.inSoftRoceVm()) {
        assertThat(NativeTestSupport.isIpv4Mapped(gid)).as("rxe0's GID for 10.0.0.1").isTrue();
        assertThat(new byte[] {gid[12], gid[13], gid[14], gid[15]}).containsExactly(10, 0, 0, 1);
      }
      assertThatThrownBy(() -> ctx.queryPort(0)).isInstanceOf(IllegalArgumentException.class);
    }
    ctx.close(); // idempotent
    assertThatThrownBy(ctx::allocateProtectionDomain).isInstanceOf(ResourceClosedException.class);
  }

  @Test
  @Order(2)
  void memoryRegionsFollowTheirProtectionDomain() {
    try (RdmaContext ctx = NativeTestSupport.open(); Arena arena = Arena.ofConfined()) {
      ProtectionDomain pd = ctx.allocateProtectionDomain();
      assertThatThrownBy(() -> pd.registerMemory(MemorySegment.ofArray(new byte[64]), Access.local()))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("heap");
      MemorySegment seg = arena.allocate(BUF, 4096);
      MemoryRegion mr = pd.registerMemory(seg, Access.remote());
      assertThat(mr.address()).isEqualTo(seg.address());
      assertThat(mr.length()).isEqualTo(BUF);
      assertThat(mr.access()).isEqualTo(Access.remote());
      assertThat(mr.localKey()).isNotZero();

      assertThatThrownBy(pd::close).isInstanceOf(ResourceBusyException.class)
          .satisfies(e -> assertThat(((NativeCallException) e).errno()).isEqualTo(NativeCallException.EBUSY));
      assertThat(pd.isClosed()).isFalse();
      assertThat(mr.remoteKey()).isEqualTo(mr.remoteKey()); // still usable

      mr.close();
      mr.close(); // idempotent
      assertThatThrownBy(mr::localKey).isInstanceOf(ResourceClosedException.class);
      pd.close();
      pd.close();
      assertThatThrownBy(() -> pd.registerMemory(seg, Access.local())).isInstanceOf(ResourceClosedException.class);
      assertThatCode(ctx::close).doesNotThrowAnyException();
    }
  }

  /**
   * ibv_destroy_comp_channel called directly, skipping the lease check: its errno (0: destroyed).
   * Had it destroyed the channel, closing it again would free it twice, so that fails the test here.
   */
  private static int destroyBypassingLeases(NativeCompletionChannel channel) {
    int errno = Native.errnoOf(Ibverbs.destroyCompChannel(channel.channel));
    if (errno == 0) {
      throw new AssertionError("ibv_destroy_comp_channel destroyed " + channel + " under a live CQ; "
          + "the test leaves it unclosed rather than free it twice");
    }
    return errno;
  }

  @Test
  @Order(3)
  void completionChannelRefusesToCloseUnderACompletionQueue() {
    try (RdmaContext ctx = NativeTestSupport.open()) {
      NativeCompletionChannel channel = (NativeCompletionChannel) ctx.createCompletionChannel();
      CompletionQueue cq = ctx.createCompletionQueue(8, channel);
      assertThat(cq.channel()).isSameAs(channel);
      assertThat(cq.depth()).isGreaterThanOrEqualTo(8);

      // Our lease check refuses first...
      assertThatThrownBy(channel::close).isInstanceOf(ResourceBusyException.class)
          .hasMessageContaining("ibv_destroy_comp_channel");
      // ...and the native call, asked directly, refuses the same way.
      assertThat(destroyBypassingLeases(channel)).isEqualTo(NativeCallException.EBUSY);
      assertThat(channel.awaitEvent(Duration.ofMillis(1))).isFalse(); // still alive and usable

      cq.close();
      channel.close();
      assertThat(channel.isClosed()).isTrue();
    }
  }

  @Test
  @Order(4)
  void reliableConnectionMovesDataEveryWay() throws Exception {
    try (RdmaContext ctx = NativeTestSupport.open(); Arena arena = Arena.ofConfined()) {
      ProtectionDomain pd = ctx.allocateProtectionDomain();
      CompletionQueue cqA = ctx.createCompletionQueue(32, null);
      CompletionQueue cqB = ctx.createCompletionQueue(32, null);
      // A CQ cannot be promised more than its depth.
      assertThatThrownBy(() -> pd.createQueuePair(QueuePairOptions.reliable(cqA, cqA.depth())))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining(String.valueOf(cqA.depth())).hasMessageContaining(String.valueOf(2 * cqA.depth()));
      QueuePair a = pd.createQueuePair(QueuePairOptions.reliable(cqA, 16).withMaxInlineData(64));
      QueuePair b = pd.createQueuePair(QueuePairOptions.reliable(cqB, 16).withMaxInlineData(64));
      assertThat(a.state()).isEqualTo(QueuePairState.RESET);
      connect(ctx, a, b);
      assertThat(a.state()).isEqualTo(QueuePairState.RTS);
      assertThat(b.state()).isEqualTo(QueuePairState.RTS);

      MemorySegment bufA = arena.allocate(BUF, 4096);
      MemorySegment bufB = arena.allocate(BUF, 4096);
      MemoryRegion mrA = pd.registerMemory(bufA, Access.remote());
      MemoryRegion mrB = pd.registerMemory(bufB, Access.remote());
      SendRequest send = new SendRequest();
      ReceiveRequest recv = new ReceiveRequest();

      // SEND a -> b, content checked
      b.postReceive(recv.set(100, mrB, 0, 256));
      put(bufA, 0, "hello from a");
      a.postSend(send.send(1, mrA, 0, 12));
      assertSuccess(await(cqA, 1).getFirst(), 1, WorkCompletion.Opcode.SEND);
      WorkCompletion rb = await(cqB, 1).getFirst();
      assertSuccess(rb, 100, WorkCompletion.Opcode.RECV);
      assertThat(rb.byteLength()).isEqualTo(12);
      assertThat(rb.qpNumber()).isEqualTo(b.qpNumber());
      assertThat(get(bufB, 0, 12)).isEqualTo("hello from a");

      // SEND b -> a
      a.postReceive(recv.set(200, mrA, 512, 256));
      put(bufB, 512, "and back from b");
      b.postSend(send.send(2, mrB, 512, 15));
      assertSuccess(await(cqB, 1).getFirst(), 2, WorkCompletion.Opcode.SEND);
      assertSuccess(await(cqA, 1).getFirst(), 200, WorkCompletion.Opcode.RECV);
      assertThat(get(bufA, 512, 15)).isEqualTo("and back from b");

      // SEND_WITH_IMM
      b.postReceive(recv.set(101, mrB, 0, 256));
      a.postSend(send.send(3, mrA, 0, 5).opcode(SendRequest.Opcode.SEND_WITH_IMM).immediate(0xCAFEBABE));
      assertSuccess(await(cqA, 1).getFirst(), 3, WorkCompletion.Opcode.SEND);
      WorkCompletion imm = await(cqB, 1).getFirst();
      assertSuccess(imm, 101, WorkCompletion.Opcode.RECV);
      assertThat(imm.hasImmediate()).isTrue();
      assertThat(imm.immediateData()).isEqualTo(0xCAFEBABE);

      // RDMA_WRITE, content checked, no receive consumed
      put(bufA, 1024, "written remotely");
      a.postSend(send.write(4, mrA, 1024, 16, mrB.address() + 1024, mrB.remoteKey()));
      assertSuccess(await(cqA, 1).getFirst(), 4, WorkCompletion.Opcode.RDMA_WRITE);
      assertThat(get(bufB, 1024, 16)).isEqualTo("written remotely");

      // RDMA_WRITE_WITH_IMM: data lands and the peer gets a completion with the immediate
      b.postReceive(recv.set(102, mrB, 0, 0));
      put(bufA, 1536, "write+imm");
      a.postSend(send.write(5, mrA, 1536, 9, mrB.address() + 1536, mrB.remoteKey())
          .opcode(SendRequest.Opcode.RDMA_WRITE_WITH_IMM).immediate(42));
      assertSuccess(await(cqA, 1).getFirst(), 5, WorkCompletion.Opcode.RDMA_WRITE);
      WorkCompletion wimm = await(cqB, 1).getFirst();
      assertSuccess(wimm, 102, WorkCompletion.Opcode.RECV_RDMA_WITH_IMM);
      assertThat(wimm.immediateData()).isEqualTo(42);
      assertThat(get(bufB, 1536, 9)).isEqualTo("write+imm");

      // RDMA_READ, content checked
      put(bufB, 2048, "read me remotely");
      a.postSend(send.read(6, mrA, 2048, 16, mrB.address() + 2048, mrB.remoteKey()));
      WorkCompletion read = await(cqA, 1).getFirst();
      assertSuccess(read, 6, WorkCompletion.Opcode.RDMA_READ);
      assertThat(get(bufA, 2048, 16)).isEqualTo("read me remotely");

      // Inline SEND: the payload is copied at post time, so overwriting it afterwards changes nothing.
      b.postReceive(recv.set(103, mrB, 3072, 64));
      put(bufA, 3072, "inline!");
      a.postSend(send.send(7, mrA, 3072, 7).flags(SendRequest.SIGNALED | SendRequest.INLINE));
      put(bufA, 3072, "XXXXXXX");
      assertSuccess(await(cqA, 1).getFirst(), 7, WorkCompletion.Opcode.SEND);
      assertSuccess(await(cqB, 1).getFirst(), 103, WorkCompletion.Opcode.RECV);
      assertThat(get(bufB, 3072, 7)).isEqualTo("inline!");

      // Unsignaled SEND: the receiver sees it, the sender gets no completion; a signaled one follows.
      b.postReceive(recv.set(104, mrB, 0, 64));
      b.postReceive(recv.set(105, mrB, 64, 64));
      a.postSend(send.send(8, mrA, 0, 4).flags(0));
      a.postSend(send.send(9, mrA, 0, 4));
      List<WorkCompletion> senderSide = await(cqA, 1);
      assertSuccess(senderSide.getFirst(), 9, WorkCompletion.Opcode.SEND);
      assertThat(await(cqB, 2)).extracting(WorkCompletion::wrId).containsExactly(104L, 105L);
      NativeTestSupport.assertNoCompletion(cqA, Duration.ofMillis(200));

      // toError flushes what is still posted.
      b.postReceive(recv.set(106, mrB, 0, 64));
      b.toError();
      assertThat(await(cqB, 1).getFirst().status()).isEqualTo(WorkCompletion.Status.WR_FLUSH_ERR);
      assertThat(b.state()).isEqualTo(QueuePairState.ERROR);

      assertThatThrownBy(cqA::close).isInstanceOf(ResourceBusyException.class);
      for (AutoCloseable c : List.of(a, b, mrA, mrB, cqA, cqB, pd)) {
        c.close();
      }
      assertThatThrownBy(() -> a.postSend(send)).isInstanceOf(ResourceClosedException.class);
    }
  }

  @Test
  @Order(5)
  void completionArrivesThroughTheChannel() {
    try (RdmaContext ctx = NativeTestSupport.open(); Arena arena = Arena.ofConfined()) {
      ProtectionDomain pd = ctx.allocateProtectionDomain();
      CompletionChannel channel = ctx.createCompletionChannel();
      CompletionQueue cqA = ctx.createCompletionQueue(8, null);
      CompletionQueue cqB = ctx.createCompletionQueue(8, channel);
      QueuePair a = pd.createQueuePair(QueuePairOptions.reliable(cqA, 4));
      QueuePair b = pd.createQueuePair(QueuePairOptions.reliable(cqB, 4));
      connect(ctx, a, b);
      MemorySegment buf = arena.allocate(BUF, 4096);
      MemoryRegion mr = pd.registerMemory(buf, Access.local());

      cqB.requestNotification(false);
      assertThat(channel.awaitEvent(Duration.ofMillis(50))).as("nothing completed yet").isFalse();
      assertThat(channel.nextEvent()).isNull();
      b.postReceive(new ReceiveRequest().set(1, mr, 0, 64));
      a.postSend(new SendRequest().send(2, mr, 1024, 8));
      assertThat(channel.awaitEvent(TIMEOUT)).isTrue();
      assertThat(channel.nextEvent()).isSameAs(cqB);
      assertThatThrownBy(() -> cqB.acknowledgeEvents(2)).isInstanceOf(IllegalArgumentException.class);
      cqB.acknowledgeEvents(1);
      assertSuccess(await(cqB, 1).getFirst(), 1, WorkCompletion.Opcode.RECV);
      cqB.requestNotification(false); // re-arm: no new completion, so no new event
      assertThat(channel.nextEvent()).isNull();
      assertSuccess(await(cqA, 1).getFirst(), 2, WorkCompletion.Opcode.SEND);

      // An event left unacknowledged must not hang the CQ's destruction.
      b.postReceive(new ReceiveRequest().set(3, mr, 0, 64));
      a.postSend(new SendRequest().send(4, mr, 1024, 8));
      assertThat(channel.awaitEvent(TIMEOUT)).isTrue();
      assertThat(channel.nextEvent()).isSameAs(cqB);
      await(cqA, 1);
      await(cqB, 1);
      for (AutoCloseable c : List.of(a, b, mr, cqA, cqB, channel, pd)) {
        try {
          c.close();
        } catch (Exception e) {
          throw new AssertionError(e);
        }
      }
    }
  }

  @Test
  @Order(6)
  void extendedVerbsReachTheProviderAndReportItsRefusal() throws IOException {
    try (RdmaContext ctx = NativeTestSupport.open()) {
      ProtectionDomain pd = ctx.allocateProtectionDomain();
      Path file = Files.createTempFile("xrcd", ".domain");
      try {
        assertUnsupported(() -> ctx.openXrcDomain(XrcDomainOptions.privateDomain()), "ibv_open_xrcd");
        assertUnsupported(() -> ctx.openXrcDomain(XrcDomainOptions.shared(file)), "ibv_open_xrcd");
        assertUnsupported(ctx::allocateThreadDomain, "ibv_alloc_td");
        assertUnsupported(() -> NativeParentDomain.allocate((NativeProtectionDomain) pd, null),
            "ibv_alloc_parent_domain");
      } finally {
        Files.deleteIfExists(file);
      }
      assertThat(((NativeProtectionDomain) pd).dependants()).as("failed allocations leave no lease").isZero();
      pd.close();
    }
  }

  @Test
  @Order(7)
  void asyncEventStreamIsHotAndCompletesOnClose() {
    RdmaContext ctx = NativeTestSupport.open();
    assertThat(threadsNamed("rdma-async-")).isPositive();
    long before = threadsNamed("rdma-async-");
    StepVerifier.create(ctx.asyncEvents())
        .then(ctx::close)
        .expectComplete()
        .verify(TIMEOUT);
    assertThat(threadsNamed("rdma-async-")).isEqualTo(before - 1);
  }

  @Test
  @Order(100)
  void closingEverythingLeavesNothingInTheKernel() throws Exception {
    long pid = ProcessHandle.current().pid();
    try (RdmaContext ctx = NativeTestSupport.open(); Arena arena = Arena.ofConfined()) {
      ProtectionDomain pd = ctx.allocateProtectionDomain();
      MemoryRegion mr = pd.registerMemory(arena.allocate(BUF, 4096), Access.local());
      CompletionQueue cq = ctx.createCompletionQueue(8, null);
      QueuePair qp = pd.createQueuePair(QueuePairOptions.reliable(cq, 4));
      // Positive control: while alive, every kind is listed for this pid.
      for (String kind : List.of("qp", "cq", "mr", "pd")) {
        assertThat(resourcesOf(kind, pid)).as("live %s of pid %d", kind, pid).isNotEmpty();
      }
      qp.close();
      cq.close();
      mr.close();
      pd.close();
    }
    for (String kind : List.of("qp", "cq", "mr", "pd")) {
      assertThat(resourcesOf(kind, pid)).as("%s left behind by pid %d", kind, pid).isEmpty();
    }
  }

  // ---------------------------------------------------------------------------------------------

  static void connect(RdmaContext ctx, QueuePair a, QueuePair b) {
    QueuePairConnectOptions opts = QueuePairConnectOptions.defaults()
        .withGidIndex(NativeTestSupport.usableGidIndex(ctx));
    a.connect(b.localAddress(opts), opts);
    b.connect(a.localAddress(opts), opts);
  }

  private static void assertSuccess(WorkCompletion wc, long wrId, WorkCompletion.Opcode opcode) {
    assertThat(wc.status()).as("%s", wc).isEqualTo(WorkCompletion.Status.SUCCESS);
    assertThat(wc.wrId()).as("%s", wc).isEqualTo(wrId);
    assertThat(wc.opcode()).as("%s", wc).isEqualTo(opcode);
  }

  private static void assertUnsupported(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String function) {
    assertThatThrownBy(call).isInstanceOf(UnsupportedByDeviceException.class)
        .satisfies(e -> {
          NativeCallException n = (NativeCallException) e;
          assertThat(n.function()).isEqualTo(function);
          assertThat(n.errno()).isEqualTo(NativeCallException.EOPNOTSUPP);
        });
  }

  private static void put(MemorySegment seg, long offset, String s) {
    byte[] b = s.getBytes(StandardCharsets.US_ASCII);
    MemorySegment.copy(b, 0, seg, ValueLayout.JAVA_BYTE, offset, b.length);
  }

  private static String get(MemorySegment seg, long offset, int length) {
    return new String(seg.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.US_ASCII);
  }

  private static long threadsNamed(String prefix) {
    return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(prefix)).count();
  }

  /** Lines of {@code rdma resource show <kind>} that belong to process {@code pid} (any of its threads). */
  private static List<String> resourcesOf(String kind, long pid) throws IOException, InterruptedException {
    Process p;
    try {
      p = new ProcessBuilder("rdma", "resource", "show", kind).redirectErrorStream(true).start();
    } catch (IOException e) {
      throw new AssertionError("the 'rdma' tool (iproute2) is needed for the leak check", e);
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("rdma resource show %s:\n%s", kind, out).isZero();
    Pattern pidPattern = Pattern.compile("\\bpid (\\d+)\\b");
    // The kernel's resource tracker records the creating thread's id, so match any thread of ours.
    java.util.Set<Long> ids = new java.util.HashSet<>(List.of(pid));
    try (var tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
      tasks.forEach(t -> ids.add(Long.parseLong(t.getFileName().toString())));
    }
    List<String> mine = out.lines().filter(l -> {
      Matcher m = pidPattern.matcher(l);
      return m.find() && ids.contains(Long.parseLong(m.group(1)));
    }).toList();
    return mine;
  }
}
