package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import java.util.Map;

/** The transport conformance suites on the in-memory provider. */
class InMemoryTransportTest extends TransportConformance {
  /** The in-memory provider on the loopback address, with the full scale test (10,000 connections). */
  static final TransportFixture IN_MEMORY = new TransportFixture() {
    @Override
    public String provider() {
      return InMemoryProvider.NAME;
    }

    @Override
    public String host() {
      return "127.0.0.1";
    }

    @Override
    public Map<String, Integer> liveResources() {
      return new InMemoryProvider().liveObjects();
    }

    @Override
    public int scaleConnections() {
      return 10_000;
    }
  };

  @Override
  protected TransportFixture fixture() {
    return IN_MEMORY;
  }
}
