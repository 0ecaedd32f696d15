package io.rdmareactive.rdma.nativ;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.conformance.TestSettings;
import io.rdmareactive.rdma.transport.TransportConformance;
import io.rdmareactive.rdma.transport.TransportFixture;
import io.rdmareactive.rdma.transport.TransportSuite;
import io.rdmareactive.rdma.transport.DisposableRdmaServer;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The transport conformance suite over librdmacm and rxe0 (scripts/softroce-vm; address
 * RDMA_TEST_ADDRESS, default 10.0.0.1). Leaks are checked in the kernel's resource tracker.
 */
@Tag("native")
class NativeTransportTest extends TransportConformance {
  /**
   * rxe0 under TCG: Java runs ~13x slower than on the host, so the sizes shrink where a smaller
   * run checks the same property, and waits grow where a timer tick or a round trip is slower.
   */
  static final TransportFixture RXE = new TransportFixture() {
    @Override
    public String provider() {
      return NativeProvider.NAME;
    }

    @Override
    public String host() {
      return NativeConnectionProviderTest.HOST;
    }

    @Override
    public Map<String, Integer> liveResources() {
      return KernelResources.live();
    }

    /** rxe retries RNR as hardware does (forever at RNR_RETRY 7). */
    @Override
    public boolean retriesReceiverNotReady() {
      return true;
    }

    /** A shorter sequence checks the same ordering. */
    @Override
    public int sequenceLength() {
      return 2_000;
    }

    /** A timer tick and a probe's round trip take far longer than on the host. */
    @Override
    public Duration keepaliveInterval() {
      return Duration.ofSeconds(1);
    }

    /** Fewer connect attempts racing a dispose (each is a QP, CQ and PD on rxe0). */
    @Override
    public int raceConnections() {
      return 16;
    }

    /**
     * 10^4 rogue messages (RDMA_ROGUE_MESSAGES overrides): the heap checks compare after a tenth
     * and after all, so fewer rogues still show growth per rogue.
     */
    @Override
    public long rogueMessages() {
      return TestSettings.rogueMessages(10_000);
    }

    /** Credits may take a while to come back: wait longer before calling a rogue stalled. */
    @Override
    public Duration rogueStall() {
      return Duration.ofSeconds(5);
    }

    /** Fewer connections for the loop tests; the scale test has the full count. */
    @Override
    public int loopConnections() {
      return 50;
    }

    /** 1,000 connections (both ends in this JVM, 2,000 QPs on rxe0); RDMA_SCALE_CONNECTIONS overrides. */
    @Override
    public int scaleConnections() {
      return TestSettings.scaleConnections();
    }
  };

  @BeforeAll
  static void warmUp() {
    NativeTestSupport.deviceName(); // skips, saying why, where there is no device
    NativeConnectionProviderTest.openCmDeviceContext();
  }

  @Override
  protected TransportFixture fixture() {
    return RXE;
  }

  /** What only a real CM can show: the in-memory fabric completes a handshake within the accept. */
  @Nested
  class HandshakeDeadline extends TransportSuite {
    @Override
    protected TransportFixture fixture() {
      return RXE;
    }

    /**
     * A handshake that does not finish within HANDSHAKE_TIMEOUT is dropped, and everything made for
     * it is freed (the resource check after each test). 1 ms is shorter than any handshake on rxe0,
     * so each attempt fails, or, where the client saw ESTABLISHED before the server gave up, its
     * connection ends; none reaches the handler. (The in-memory fabric completes a handshake within
     * the accept, so only a real CM can run this.)
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
          StepVerifier.create(c.onDispose()).as("a connection whose server side was dropped")
              .expectComplete().verify(WAIT);
        }
      }
      assertThat(served).as("connections handed to the handler").isEmpty();
    }
  }
}
