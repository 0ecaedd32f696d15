package io.rdmareactive.samples.pricing;

import java.util.List;

/** The pricing pair on the in-memory provider (host). */
class PricingDemoTest extends AbstractPricingDemoTest {
  @Override
  protected List<String> transportArgs() {
    return List.of("--rdma.provider=in-memory", "--rdma.server.host=127.0.0.1",
        "--rdma.clients.pricing.host=127.0.0.1");
  }
}
