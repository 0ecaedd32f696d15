package io.rdmareactive.rdma.rdmacore;

import io.rdmareactive.rdma.loop.AbstractCompletionsPublisherTckTest;
import io.rdmareactive.rdma.verbs.RdmaContext;
import java.util.Map;
import org.testng.annotations.BeforeClass;
import org.testng.annotations.Test;

/**
 * Proves that {@code CompletionQueue.completions()} follows the Reactive Streams specification on
 * rxe0 (scripts/softroce-vm): the TCK's {@code PublisherVerification} of
 * {@link AbstractCompletionsPublisherTckTest}, its publishers the CQs of loopback QP pairs on the
 * device, with the kernel's count of this JVM's verbs objects the same after each test as before
 * it. TestNG group {@code native}, which the TestNG engine reports as the JUnit tag the VM phase
 * selects and the host build excludes.
 */
@Test(groups = "native")
public class NativeCompletionsPublisherTckTest extends AbstractCompletionsPublisherTckTest {
  private int gidIndex = -1;

  public NativeCompletionsPublisherTckTest() {
    super(NativeTck.TIMEOUT_MILLIS, NativeTck.NO_SIGNAL_MILLIS, NativeTck.GC_TIMEOUT_MILLIS);
  }

  @BeforeClass(alwaysRun = true)
  public void findDevice() {
    NativeTck.requireDevice();
  }

  @Override
  protected RdmaContext openContext() {
    RdmaContext ctx = NativeTestSupport.open();
    if (gidIndex < 0) {
      gidIndex = NativeTestSupport.usableGidIndex(ctx);
    }
    return ctx;
  }

  @Override
  protected int gidIndex() {
    return gidIndex;
  }

  @Override
  protected Map<String, Integer> liveResources() {
    return KernelResources.live();
  }
}
