package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import java.util.Map;

/** A connection on its loop (containment, timers, loop variants) on the in-memory provider. */
class InMemoryConnectionLoopTest extends AbstractConnectionLoopTest {
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
}
