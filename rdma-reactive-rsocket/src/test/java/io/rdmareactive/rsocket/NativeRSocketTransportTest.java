package io.rdmareactive.rsocket;

import io.rdmareactive.rdma.transport.TransportFixture;
import org.junit.jupiter.api.Tag;

/**
 * RSocket over the RDMA transports on librdmacm and rxe0 (scripts/softroce-vm; address
 * RDMA_TEST_ADDRESS, default 10.0.0.1); excluded from host runs by its tag. Leaks are checked as
 * received frames not released (the kernel's resource tracker is the native module's test code).
 */
@Tag("native")
class NativeRSocketTransportTest extends AbstractRSocketTransportTest {
  private static final TransportFixture RXE = Rxe.UNCOUNTED;

  @Override
  protected TransportFixture fixture() {
    return RXE;
  }
}
