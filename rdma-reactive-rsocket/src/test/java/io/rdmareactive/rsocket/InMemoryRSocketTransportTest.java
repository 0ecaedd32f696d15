package io.rdmareactive.rsocket;

import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import java.util.Map;

/** RSocket over the RDMA transports on the in-memory provider. */
class InMemoryRSocketTransportTest extends AbstractRSocketTransportTest {
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
