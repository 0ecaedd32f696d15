package io.rdmareactive.rsocket;

import io.rdmareactive.rdma.transport.InMemoryFixture;
import io.rdmareactive.rdma.transport.TransportFixture;

/** RSocket frames from registered memory on the in-memory provider. */
class InMemoryRegisteredFramesTest extends AbstractRegisteredFramesTest {
  @Override
  protected TransportFixture fixture() {
    return InMemoryFixture.INSTANCE;
  }
}
