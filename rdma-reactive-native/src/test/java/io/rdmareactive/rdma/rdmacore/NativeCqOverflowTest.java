package io.rdmareactive.rdma.rdmacore;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.conformance.LeakCheck;
import io.rdmareactive.rdma.spi.ConnectionProvider;
import io.rdmareactive.rdma.spi.Endpoint;
import io.rdmareactive.rdma.spi.EndpointOptions;
import io.rdmareactive.rdma.spi.Listener;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ReceiveRequest;
import io.rdmareactive.rdma.verbs.SendRequest;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * IBV_EVENT_CQ_ERR routed to the connection whose CQ it names, on a device (Soft-RoCE: rxe_cq_post
 * raises it when a completion finds the CQ full). Through the SPI the CQ cannot overflow: a QP's
 * {@link WorkRequestLedger} holds each work request's slot until its completion is polled. So the
 * test posts the victim's receives behind the ledger (ibv_post_recv on its QP directly, refilled as
 * the peer's SENDs consume them) and never polls its CQ, while the peer, an endpoint in this JVM on
 * the same device, sends one message more than the CQ holds: the victim's {@code onDisconnect()}
 * errors naming the event and its CQ, the peer's connection is not failed by it, and closing both
 * frees everything.
 */
@Tag("native")
class NativeCqOverflowTest {
  private static final Duration WAIT = Duration.ofSeconds(30); // TCG in the VM: slow

  /** librdmacm opens the device's context and PD for good on first use: before counting. */
  @BeforeAll
  static void warmUp() {
    NativeTestSupport.deviceName(); // skips, saying why, where there is no device
    NativeConnectionProviderTest.openCmDeviceContext();
  }

  @Test
  void aCompletionQueueThatOverflowsFailsItsConnectionNamingCqErr() throws Exception {
    Map<String, Integer> before = KernelResources.live();
    ConnectionProvider cp = new NativeProvider().connections();
    AtomicReference<Endpoint> victimRef = new AtomicReference<>();
    AtomicReference<Endpoint> peerRef = new AtomicReference<>();
    try (Listener listener = cp.listen(new InetSocketAddress(NativeConnectionProviderTest.HOST, 0),
        new EndpointOptions(2, 2, 0, new byte[0]))) {
      Mono<Endpoint> incoming = listener.incoming().next()
          .publishOn(reactor.core.scheduler.Schedulers.boundedElastic()) // building blocks: off rdma-cm
          .map(io.rdmareactive.rdma.spi.ConnectRequest::createEndpoint).cache();
      StepVerifier.create(cp.connect(listener.boundAddress(), new EndpointOptions(1, 4, 0, new byte[0]), WAIT)
              .doOnNext(victimRef::set)
              .flatMap(victim -> Mono.when(victim.establish(),
                  incoming.doOnNext(peerRef::set).flatMap(Endpoint::establish))))
          .expectComplete()
          .verify(WAIT);
    } catch (RuntimeException | Error e) {
      closeQuietly(victimRef.get(), e); // what a failed connect made, so later tests count from here
      closeQuietly(peerRef.get(), e);
      throw e;
    }
    Endpoint victim = victimRef.get();
    Endpoint peer = peerRef.get();
    NativeCompletionQueue cq = (NativeCompletionQueue) victim.completionQueue();
    int capacity = cq.depth(); // what the provider granted (rxe: 2^k - 1 >= the 5 asked for)
    String event = "IBV_EVENT_CQ_ERR on " + victim.context().deviceName() + " (CQ 0x"
        + Long.toHexString(cq.cq.address()) + ")";
    CompletableFuture<Void> victimGone = victim.onDisconnect().toFuture();
    CompletableFuture<Void> peerGone = peer.onDisconnect().toFuture();
    try (Arena arena = Arena.ofConfined();
         MemoryRegion vmr = victim.protectionDomain().registerMemory(arena.allocate(64), Access.local());
         MemoryRegion pmr = peer.protectionDomain().registerMemory(arena.allocate(64), Access.local())) {
      RawReceives receives = new RawReceives(arena, (NativeQueuePair) victim.queuePair(), vmr);
      assertThat(receives.refill()).as("receives the victim's RQ takes").isGreaterThanOrEqualTo(4);
      // The CQ filled to the brim: each SEND acknowledged has its receive's completion in the CQ
      // (rxe's responder writes it before the ACK), and none is polled.
      for (int i = 1; i <= capacity; i++) {
        peer.queuePair().postSend(new SendRequest().send(i, pmr, 0, 8).flags(SendRequest.SIGNALED));
        WorkCompletion sent = NativeTestSupport.await(peer.completionQueue(), 1).getFirst();
        assertThat(sent.isSuccess()).as("send %d of %d: %s", i, capacity, sent).isTrue();
        receives.refill();
      }
      assertThat(victimGone).as("the victim's connection with its CQ full, not yet overflowed").isNotDone();

      long start = System.nanoTime();
      peer.queuePair().postSend(new SendRequest().send(capacity + 1, pmr, 0, 8).flags(SendRequest.SIGNALED));
      StepVerifier.create(victim.onDisconnect())
          .expectErrorSatisfies(e -> {
            assertThat(e).isInstanceOf(ConnectionException.class).hasMessageContaining(event);
            assertThat(((ConnectionException) e).reason()).isEqualTo(ConnectionException.Reason.RESET);
          })
          .verify(WAIT);
      Duration noticed = Duration.ofNanos(System.nanoTime() - start);
      System.out.println("CQ overflow (native, " + capacity + " entries): the victim's connection failed with "
          + event + " within " + noticed.toMillis() + " ms of the SEND that overflowed it");
      // Routed by CQ: the peer's connection, on the same device and loop, is not failed by it.
      assertThat(peerGone).as("the peer's connection").isNotDone();
    } finally {
      victim.close(); // disconnects: the peer sees a disconnect, not a fault
      StepVerifier.create(peer.onDisconnect()).expectComplete().verify(WAIT);
      peer.close();
    }
    LeakCheck.awaitSame(KernelResources::live, before, WAIT);
  }

  private static void closeQuietly(@Nullable Endpoint endpoint, Throwable failure) {
    if (endpoint != null) {
      try {
        endpoint.close();
      } catch (RuntimeException e) {
        failure.addSuppressed(e);
      }
    }
  }

  /**
   * ibv_post_recv on a QP directly, behind its ledger, which would refuse to post more than its
   * CQ can hold unpolled. Every receive is into the same 64 bytes of {@code mr}.
   */
  private static final class RawReceives {
    private final NativeQueuePair qp;
    private final RecvWr wr;
    private final MemorySegment badWr;
    private long posted;

    RawReceives(Arena arena, NativeQueuePair qp, MemoryRegion mr) {
      this.qp = qp;
      wr = new RecvWr(arena, 1).set(new ReceiveRequest().set(0, mr, 0, 64));
      badWr = arena.allocate(ValueLayout.ADDRESS);
    }

    /** Posts until the RQ is full (ENOMEM); returns how many went in. */
    int refill() {
      int n = 0;
      while (true) {
        int rc = Math.abs(InlineVerbs.post(qp.nativeContext().postRecvFn, qp.qp, wr.wrId(++posted).segment(), badWr));
        if (rc != 0) {
          assertThat(rc).as("ibv_post_recv on a full RQ: %s", NativeCallException.describe(rc))
              .isEqualTo(NativeCallException.ENOMEM);
          posted--;
          return n;
        }
        n++;
      }
    }
  }
}
