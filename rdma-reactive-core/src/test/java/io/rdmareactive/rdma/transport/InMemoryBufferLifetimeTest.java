package io.rdmareactive.rdma.transport;

/** Buffer lifetimes on the in-memory provider. */
class InMemoryBufferLifetimeTest extends AbstractBufferLifetimeTest {
  @Override
  protected TransportFixture fixture() {
    return InMemoryFixture.INSTANCE;
  }
}
