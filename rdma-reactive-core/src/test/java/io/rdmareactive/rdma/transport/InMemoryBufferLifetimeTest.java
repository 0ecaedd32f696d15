package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.inmemory.InMemoryProvider;

/** Buffer lifetimes on the in-memory provider. */
class InMemoryBufferLifetimeTest extends AbstractBufferLifetimeTest {
  @Override
  protected String provider() {
    return InMemoryProvider.NAME;
  }

  @Override
  protected String host() {
    return "127.0.0.1";
  }
}
