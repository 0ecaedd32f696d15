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
  /** Generous for a loaded 2-core machine: also how long {@code verifyNoAsyncErrors()} waits. */
  static final long TIMEOUT_MILLIS = 1_000;
  static final long NO_SIGNAL_MILLIS = 200;

  public InboundPublisherTckTest() {
    super(TIMEOUT_MILLIS, NO_SIGNAL_MILLIS, envPublisherReferenceGCTimeoutMillis());
  }

}
