package io.rdmareactive.rdma.inmemory;

import io.rdmareactive.rdma.conformance.AbstractVerbsConformanceTest;
import io.rdmareactive.rdma.verbs.RdmaContext;
import java.util.Map;

/** The verbs suite against an in-memory device without XRC and thread domains, as rxe is. */
class InMemoryBasicDeviceConformanceTest extends AbstractVerbsConformanceTest {
  @Override
  protected RdmaContext openContext() {
    return new InMemoryProvider("mem1:basic").open("mem1");
  }

  @Override
  protected boolean supportsXrc() {
    return false;
  }

  @Override
  protected boolean supportsThreadDomains() {
    return false;
  }

  @Override
  protected Map<String, Integer> liveResources() {
    return new InMemoryProvider().liveObjects();
  }
}
