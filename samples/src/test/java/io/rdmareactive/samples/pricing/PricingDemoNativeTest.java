package io.rdmareactive.samples.pricing;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;

/**
 * The pricing pair on the native provider over Soft-RoCE (rxe0 at 10.0.0.1 in the VM): run by the
 * native test phase, not on the host.
 */
@Tag("native")
class PricingDemoNativeTest extends AbstractPricingDemoTest {
  @Override
  protected List<String> transportArgs() {
    // Java under TCG is ~13x slower: the first connect of a JVM (class loading, CM setup) needs more than 10 s.
    return List.of("--rdma.provider=native", "--rdma.server.host=10.0.0.1", "--rdma.clients.pricing.host=10.0.0.1",
        "--rdma.clients.pricing.connect-timeout=90s");
  }

  @Override
  protected int quotes() {
    return 6; // Java under TCG is slow: keep it lean
  }

  @Override
  protected Duration timeout() {
    return Duration.ofSeconds(180);
  }
}
