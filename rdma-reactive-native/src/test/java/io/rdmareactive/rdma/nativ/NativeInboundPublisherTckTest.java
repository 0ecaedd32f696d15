package io.rdmareactive.rdma.nativ;

import io.rdmareactive.rdma.transport.TransportFixture;
import io.rdmareactive.rdma.transport.AbstractInboundPublisherTckTest;
import java.util.Map;
import org.testng.annotations.BeforeClass;
import org.testng.annotations.Test;

/**
 * Proves that a connection's inbound publisher follows the Reactive Streams specification over
 * librdmacm and rxe0 (scripts/softroce-vm; address RDMA_TEST_ADDRESS, default 10.0.0.1): the TCK's
 * {@code PublisherVerification} of {@link AbstractInboundPublisherTckTest}, with the kernel's count
 * of this JVM's verbs objects the same after each test as before it. TestNG group {@code native},
 * which the TestNG engine reports as the JUnit tag the VM phase selects and the host build excludes.
 */
@Test(groups = "native")
public class NativeInboundPublisherTckTest extends AbstractInboundPublisherTckTest {
  @Override
  protected TransportFixture fixture() {
    return NativeFixture.RXE;
  }
  public NativeInboundPublisherTckTest() {
    super(NativeTck.TIMEOUT_MILLIS, NativeTck.NO_SIGNAL_MILLIS, NativeTck.GC_TIMEOUT_MILLIS);
  }

  /** librdmacm opens a device's context on first use and keeps it for the process: open it before counting. */
  @BeforeClass(alwaysRun = true)
  public void warmUp() {
    NativeTck.requireDevice();
    NativeConnectionProviderTest.openCmDeviceContext();
  }

}
