package io.rdmareactive.rsocket;

import io.rdmareactive.rdma.device.RdmaDevices;
import io.rdmareactive.rdma.spi.RdmaProvider;
import io.rdmareactive.rdma.transport.DisposableRdmaServer;
import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaLoopResources;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaServer;
import io.rdmareactive.rdma.transport.TransportFixture;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import reactor.core.publisher.Mono;

/**
 * RSocket frames from registered memory on librdmacm and rxe0 (scripts/softroce-vm; address
 * RDMA_TEST_ADDRESS, default 10.0.0.1); excluded from host runs by its tag. The kernel's resource
 * counts (the slab's MR, the loops' PD, the connections' QPs, CQs and MRs) are compared before and
 * after each test.
 */
@Tag("native")
class NativeRegisteredFramesTest extends AbstractRegisteredFramesTest {
  private static final TransportFixture RXE = Rxe.COUNTED;

  /**
   * What the provider and librdmacm open once and keep for the process (librdmacm's device
   * context with a PD of its own, the provider's device list): opened here by one run of what a
   * test does, loops, their PD, a slab and a connection, all closed again, so that the baselines
   * count only what each test makes.
   */
  @BeforeAll
  static void openWhatTheProcessKeeps() {
    Duration wait = Duration.ofSeconds(60);
    RdmaLoopResources loops = RdmaLoopResources.create("rsocket-warm-up", 1);
    RdmaProvider provider = RdmaDevices.provider(RXE.provider());
    RegisteredByteBufAllocator alloc =
        RegisteredByteBufAllocator.create(loops.protectionDomain(provider, provider.devices().getFirst().name()), 4096);
    try {
      DisposableRdmaServer server = RdmaServer.create().host(RXE.host()).port(0).option(RdmaOption.PROVIDER, "native")
          .runOn(loops).handle((in, out) -> Mono.never()).bindNow(wait);
      try {
        RdmaConnection c = RdmaClient.create().host(RXE.host()).port(server.port())
            .option(RdmaOption.PROVIDER, "native").runOn(loops).connectNow(wait);
        c.dispose();
        c.onDispose().block(wait);
      } finally {
        server.disposeNow(wait);
      }
    } finally {
      alloc.dispose();
      loops.disposeLater().block(wait);
    }
  }

  @Override
  protected TransportFixture fixture() {
    return RXE;
  }

  @Override
  protected int count() {
    return 50;
  }
}
