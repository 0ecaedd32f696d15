package io.rdmareactive.rdma.rdmacore;

import io.rdmareactive.rdma.transport.AbstractBufferLifetimeTest;
import io.rdmareactive.rdma.transport.TransportFixture;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/** Buffer lifetimes over librdmacm and rxe0 (scripts/softroce-vm): kept views, reads after release and close. */
@Tag("native")
class NativeBufferLifetimeTest extends AbstractBufferLifetimeTest {
  @BeforeAll
  static void warmUp() {
    NativeTestSupport.deviceName(); // skips, saying why, where there is no device
    NativeConnectionProviderTest.openCmDeviceContext();
  }

  @Override
  protected TransportFixture fixture() {
    return NativeFixture.RXE;
  }
}
