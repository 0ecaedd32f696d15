package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import java.util.Map;

/** The transport conformance suite on the in-memory provider. */
class InMemoryTransportTest extends AbstractTransportConformanceTest {
  @Override
  protected String provider() {
    return InMemoryProvider.NAME;
  }

  @Override
  protected String host() {
    return "127.0.0.1";
  }

  @Override
  protected int scaleConnections() {
    return 10_000;
  }

  @Override
  protected Map<String, Integer> liveResources() {
    return new InMemoryProvider().liveObjects();
  }
}
