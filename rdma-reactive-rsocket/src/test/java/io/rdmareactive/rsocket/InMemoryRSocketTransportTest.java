package io.rdmareactive.rsocket;

import io.rdmareactive.rdma.transport.TransportFixture;
import io.rdmareactive.rdma.transport.InMemoryFixture;
import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import java.util.Map;

/** RSocket over the RDMA transports on the in-memory provider. */
class InMemoryRSocketTransportTest extends AbstractRSocketTransportTest {
  @Override
  protected TransportFixture fixture() {
    return InMemoryFixture.INSTANCE;
  }

}
