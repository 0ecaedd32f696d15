package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import java.util.Map;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** A port going down on the in-memory fabric ({@link InMemoryProvider#portDown}), which stays usable afterwards. */
class InMemoryPortDownTest extends AbstractPortDownTest {
  @Override
  protected TransportFixture fixture() {
    return InMemoryFixture.INSTANCE;
  }

  private final InMemoryProvider provider = new InMemoryProvider(); // the fabric RdmaOption.PROVIDER selects



  @Override
  protected String device() {
    return provider.devices().getFirst().name();
  }

  @Override
  protected void portDown() {
    assertThat(provider.portDown(device())).as("endpoints failed: two connections, both ends on the device")
        .isEqualTo(4);
  }


  @Test
  void afterThePortWentDownNewConnectionsWorkAndNothingIsFailedTwice() {
    assertThat(provider.portDown(device())).as("no connection open").isZero();
    DisposableRdmaServer server = RdmaServer.create().host(fixture().host()).port(0).option(RdmaOption.PROVIDER, fixture().provider())
        .handle((in, out) -> out.send(in.receive())).bindNow();
    try {
      RdmaConnection c = RdmaClient.create().host(fixture().host()).port(server.port()).option(RdmaOption.PROVIDER, fixture().provider())
          .connectNow();
      StepVerifier.create(c.outbound().sendString(Mono.just("after")).thenMany(c.inbound().receiveString().take(1)))
          .expectNext("after").expectComplete().verify(WAIT);
      c.dispose();
      c.onDispose().block(WAIT);
    } finally {
      server.disposeNow(WAIT);
    }
  }

  @Test
  void anUnknownDeviceIsNamedInTheRefusal() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> provider.portDown("nope"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("nope").hasMessageContaining(device());
  }
}
