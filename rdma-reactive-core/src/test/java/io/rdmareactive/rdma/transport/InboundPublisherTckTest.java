package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import java.util.Map;

/**
 * Proves that a connection's inbound publisher follows the Reactive Streams specification on the
 * in-memory provider: {@link AbstractInboundPublisherTckTest} on the host, with no in-memory verbs
 * object outliving a test.
 */
public class InboundPublisherTckTest extends AbstractInboundPublisherTckTest {
  @Override
  protected TransportFixture fixture() {
    return InMemoryFixture.INSTANCE;
  }
  /** For a loaded 2-core machine (1 s once missed rule 1.01 there with a build beside it): also how long {@code verifyNoAsyncErrors()} waits. */
  static final long TIMEOUT_MILLIS = 2_000;
  static final long NO_SIGNAL_MILLIS = 200;

  public InboundPublisherTckTest() {
    super(TIMEOUT_MILLIS, NO_SIGNAL_MILLIS, envPublisherReferenceGCTimeoutMillis());
  }

}
