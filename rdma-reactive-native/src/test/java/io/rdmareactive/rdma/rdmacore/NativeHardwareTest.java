package io.rdmareactive.rdma.rdmacore;

import static io.rdmareactive.rdma.rdmacore.NativeTestSupport.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ParentDomain;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.QueuePairConnectOptions;
import io.rdmareactive.rdma.verbs.QueuePairOptions;
import io.rdmareactive.rdma.verbs.QueuePairType;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.ReceiveRequest;
import io.rdmareactive.rdma.verbs.SendRequest;
import io.rdmareactive.rdma.verbs.SharedReceiveQueue;
import io.rdmareactive.rdma.verbs.SharedReceiveQueueOptions;
import io.rdmareactive.rdma.verbs.ThreadDomain;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import io.rdmareactive.rdma.verbs.XrcDomain;
import io.rdmareactive.rdma.verbs.XrcDomainOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** XRC and thread/parent domains: only on hardware that has them (mlx5). */
@Tag("hardware")
class NativeHardwareTest {
  private String device;

  @BeforeEach
  void needsMlx5() {
    device = new NativeProvider().devices().stream().map(d -> d.name()).filter(n -> n.startsWith("mlx5"))
        .findFirst().orElse(null);
    Assumptions.assumeTrue(device != null, "needs a device with XRC/parent domains (mlx5); rxe0 lacks them");
  }

  @Test
  void xrcSendReachesAnSrqThroughAnOpenedReceiveQueuePair() throws Exception {
    Path file = Files.createTempFile("xrcd", ".domain");
    try (RdmaContext ctx = new NativeProvider().open(device); Arena arena = Arena.ofConfined()) {
      assertThat(ctx.queryDevice().supportsXrc()).isTrue();
      ProtectionDomain pd = ctx.allocateProtectionDomain();
      XrcDomain xrcd = ctx.openXrcDomain(XrcDomainOptions.shared(file));
      CompletionQueue sendCq = ctx.createCompletionQueue(16, null);
      CompletionQueue recvCq = ctx.createCompletionQueue(16, null);
      SharedReceiveQueue srq = xrcd.createSharedReceiveQueue(pd, recvCq, SharedReceiveQueueOptions.of(8));
      assertThat(srq.srqNumber()).isNotNegative();
      QueuePair target = xrcd.createReceiveQueuePair();
      QueuePair opened = xrcd.openQueuePair(target.qpNumber()); // what another process would do
      assertThat(opened.qpNumber()).isEqualTo(target.qpNumber());
      QueuePair sender = pd.createQueuePair(new QueuePairOptions(QueuePairType.XRC_SEND, sendCq, null, null,
          8, 0, 1, 0, 0, false));
      QueuePairConnectOptions opts = QueuePairConnectOptions.defaults()
          .withGidIndex(NativeTestSupport.usableGidIndex(ctx));
      target.connect(sender.localAddress(opts), opts);
      sender.connect(target.localAddress(opts), opts);

      MemorySegment buf = arena.allocate(4096, 4096);
      MemoryRegion mr = pd.registerMemory(buf, Access.local());
      srq.postReceive(new ReceiveRequest().set(1, mr, 0, 64));
      buf.set(ValueLayout.JAVA_LONG, 1024, 0x1122334455667788L);
      sender.postSend(new SendRequest().send(2, mr, 1024, 8).remoteSrqNumber(srq.srqNumber()));
      assertThat(await(sendCq, 1).getFirst().status()).isEqualTo(WorkCompletion.Status.SUCCESS);
      WorkCompletion r = await(recvCq, 1).getFirst();
      assertThat(r.status()).isEqualTo(WorkCompletion.Status.SUCCESS);
      assertThat(r.wrId()).isEqualTo(1);
      assertThat(buf.get(ValueLayout.JAVA_LONG, 0)).isEqualTo(0x1122334455667788L);
      for (AutoCloseable c : List.of(sender, opened, target, srq, mr, sendCq, recvCq, xrcd, pd)) {
        c.close();
      }
    } finally {
      Files.deleteIfExists(file);
    }
  }

  @Test
  void parentDomainServesAsAProtectionDomain() throws Exception {
    try (RdmaContext ctx = new NativeProvider().open(device); Arena arena = Arena.ofConfined()) {
      ProtectionDomain pd = ctx.allocateProtectionDomain();
      ThreadDomain td = ctx.allocateThreadDomain();
      ParentDomain parent = pd.allocateParentDomain(td);
      assertThat(parent.protectionDomain()).isSameAs(pd);
      assertThat(parent.threadDomain()).isSameAs(td);
      MemoryRegion mr = parent.registerMemory(arena.allocate(4096, 4096), Access.local());
      CompletionQueue cq = ctx.createCompletionQueue(16, null);
      QueuePair qp = parent.createQueuePair(QueuePairOptions.reliable(cq, 4));
      assertThat(qp.qpNumber()).isPositive();
      for (AutoCloseable c : List.of(qp, cq, mr, parent, td, pd)) {
        c.close();
      }
    }
  }
}
