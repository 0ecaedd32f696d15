package io.rdmareactive.rdma.rdmacore;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.transport.TransportConformance;
import io.rdmareactive.rdma.transport.TransportFixture;
import io.rdmareactive.rdma.transport.TransportSuite;
import io.rdmareactive.rdma.transport.DisposableRdmaServer;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaLoopResources;
import io.rdmareactive.rdma.transport.RdmaOption;
import java.util.ArrayList;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The transport conformance suite over librdmacm and rxe0 (scripts/softroce-vm; address
 * RDMA_TEST_ADDRESS, default 10.0.0.1). Leaks are checked in the kernel's resource tracker.
 */
@Tag("native")
class NativeTransportTest extends TransportConformance {
  @BeforeAll
  static void warmUp() {
    NativeTestSupport.deviceName(); // skips, saying why, where there is no device
    NativeConnectionProviderTest.openCmDeviceContext();
  }

  @Override
  protected TransportFixture fixture() {
    return NativeFixture.RXE;
  }

  /** What only a real CM can show: the in-memory fabric completes a handshake within the accept. */
  @Nested
  class HandshakeDeadline extends TransportSuite {
    @Override
    protected TransportFixture fixture() {
      return NativeFixture.RXE;
    }

    /**
     * A handshake that does not finish within HANDSHAKE_TIMEOUT is dropped, and everything made for
     * it is freed (the resource check after each test). 1 ms is shorter than any handshake on rxe0,
     * so each attempt fails, or, where the client saw ESTABLISHED before the server gave up, its
     * connection ends (at the latest when it sends); none reaches the handler. (The in-memory
     * fabric completes a handshake within the accept, so only a real CM can run this.)
     */
    @Test
    void aHandshakeOverTheHandshakeTimeoutIsDroppedAndItsResourcesFreed() {
      List<RdmaConnection> served = new CopyOnWriteArrayList<>();
      DisposableRdmaServer server = bind(server().option(RdmaOption.HANDSHAKE_TIMEOUT, Duration.ofMillis(1))
          .doOnConnection(served::add)
          .handle((in, out) -> out.send(in.receive())));
      for (int i = 0; i < 3; i++) {
        RdmaConnection c = client(server).connect().onErrorResume(e -> Mono.empty()).block(WAIT);
        if (c != null) {
          // The server's REJ (or DREQ) ends this connection. A REJ is sent once and never resent,
          // so where it is lost the client learns only when it uses the connection: a send into a
          // QP that is gone or in ERROR fails after the transport's retries.
          c.outbound().send(Mono.just(new byte[8])).subscribe(null, e -> { });
          StepVerifier.create(c.onDispose()).as("a connection whose server side was dropped")
              .expectComplete().verify(WAIT);
        }
      }
      assertThat(served).as("connections handed to the handler").isEmpty();
    }
  }

  /**
   * Issue 21's memory shape in the kernel's own count, a small case of {@code scripts/scale --vm}:
   * on two loops, 24 busy connections cost no more SRQs and memory regions than 4 do (one SRQ per
   * loop; the slabs' chunks, not one region per connection), and every one goes after close.
   */
  @Nested
  class LoopMemory extends TransportSuite {
    private static final int LOOPS = 2;

    @Override
    protected TransportFixture fixture() {
      return NativeFixture.RXE;
    }

    @Test
    void busyConnectionsAddNoSharedReceiveQueueAndNoRegionPerConnection() {
      Assumptions.assumeTrue(SHARED_RECEIVE_QUEUE, "RDMA_SHARED_RECEIVE_QUEUE=false: connections keep their own");
      RdmaLoopResources loops = RdmaLoopResources.create("rdma-mem", LOOPS);
      try {
        DisposableRdmaServer server = bind(server().runOn(loops).handle((in, out) -> out.send(in.receive())));
        List<RdmaConnection> first = busy(server, loops, 4);
        int srq4 = KernelResources.ofThisProcess("srq").size();
        int mr4 = KernelResources.ofThisProcess("mr").size();
        List<RdmaConnection> more = busy(server, loops, 20);
        int srq24 = KernelResources.ofThisProcess("srq").size();
        int mr24 = KernelResources.ofThisProcess("mr").size();
        System.out.printf("loop memory: %d loops; 4 busy connections: srq %d, mr %d; 24: srq %d, mr %d%n", LOOPS, srq4,
            mr4, srq24, mr24);
        assertThat(srq4).as("one SRQ per loop (both ends share the loops)").isEqualTo(LOOPS);
        assertThat(srq24).as("20 more connections, no more SRQs").isEqualTo(LOOPS);
        assertThat(mr24 - mr4).as("memory regions 20 more busy connections added (%d with 4, %d with 24)", mr4, mr24)
            .isLessThan(20);
        first.forEach(this::close);
        more.forEach(this::close);
        server.disposeNow(WAIT);
      } finally {
        loops.disposeLater().block(WAIT);
      }
    }

    /** {@code n} connections, each echoing 16 messages of a full 16 KiB buffer with unbounded demand. */
    private List<RdmaConnection> busy(DisposableRdmaServer server, RdmaLoopResources loops, int n) {
      List<RdmaConnection> out = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        RdmaConnection c = connect(client(server).runOn(loops));
        StepVerifier.create(Mono.when(c.outbound().send(Flux.range(0, 16).map(k -> new byte[16 * 1024])),
                c.inbound().receiveBytes().take(16).then()))
            .expectComplete().verify(WAIT);
        out.add(c);
      }
      return out;
    }

    private void close(RdmaConnection c) {
      c.dispose();
      c.onDispose().block(WAIT);
    }
  }
}
