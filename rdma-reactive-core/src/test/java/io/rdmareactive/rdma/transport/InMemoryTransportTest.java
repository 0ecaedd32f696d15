package io.rdmareactive.rdma.transport;

/** The transport conformance suites on the in-memory provider. */
class InMemoryTransportTest extends TransportConformance {
  @Override
  protected TransportFixture fixture() {
    return InMemoryFixture.INSTANCE;
  }
}
