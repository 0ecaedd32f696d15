package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import java.util.Map;

/** The listener's refusals on the in-memory provider, counted by its fabric's creation counts. */
class InMemoryListenerTest extends AbstractListenerConformanceTest {
  @Override
  protected String provider() {
    return InMemoryProvider.NAME;
  }

  @Override
  protected String host() {
    return "127.0.0.1";
  }

  @Override
  protected Map<String, Integer> liveResources() {
    return new InMemoryProvider().liveObjects();
  }

  @Override
  protected long endpointsBuiltForRequests() {
    return new InMemoryProvider().createdObjects().getOrDefault("passive-endpoint", 0L);
  }
}
