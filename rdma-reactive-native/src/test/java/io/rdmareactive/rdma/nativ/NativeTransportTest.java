package io.rdmareactive.rdma.nativ;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.transport.TransportConformance;
import io.rdmareactive.rdma.transport.TransportFixture;
import io.rdmareactive.rdma.transport.TransportSuite;
import io.rdmareactive.rdma.transport.DisposableRdmaServer;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaOption;
import java.time.Duration;
import java.util.List;
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
