package io.rdmareactive.rdma.inmemory;

import io.rdmareactive.rdma.conformance.AbstractCompletionStreamConformanceTest;
import io.rdmareactive.rdma.verbs.RdmaContext;
import java.util.Map;

class InMemoryCompletionStreamConformanceTest extends AbstractCompletionStreamConformanceTest {
  @Override
  protected RdmaContext openContext() {
    return new InMemoryProvider().open("mem0");
  }

  @Override
  protected boolean supportsXrc() {
    return true;
  }

  @Override
  protected boolean supportsThreadDomains() {
    return true;
  }

  @Override
  protected Map<String, Integer> liveResources() {
    return new InMemoryProvider().liveObjects();
  }
}
