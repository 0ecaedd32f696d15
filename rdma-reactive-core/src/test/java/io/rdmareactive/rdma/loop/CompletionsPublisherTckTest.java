package io.rdmareactive.rdma.loop;

import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import io.rdmareactive.rdma.verbs.RdmaContext;
import java.util.Map;

/**
 * Proves that {@code CompletionQueue.completions()} follows the Reactive Streams specification on
 * the in-memory provider: {@link AbstractCompletionsPublisherTckTest} on the host, with no
 * in-memory verbs object outliving a test.
 */
public class CompletionsPublisherTckTest extends AbstractCompletionsPublisherTckTest {
  /**
   * As the inbound TCK's: 1 s is too short on a loaded 2-core machine (the inbound one once missed
   * rule 1.01 there); also how long {@code verifyNoAsyncErrors()} waits.
   */
  private static final long TIMEOUT_MILLIS = 2_000;
  private static final long NO_SIGNAL_MILLIS = 200;

  public CompletionsPublisherTckTest() {
    super(TIMEOUT_MILLIS, NO_SIGNAL_MILLIS, envPublisherReferenceGCTimeoutMillis());
  }

  @Override
  protected RdmaContext openContext() {
    return new InMemoryProvider().open("mem0");
  }

  @Override
  protected Map<String, Integer> liveResources() {
    return new InMemoryProvider().liveObjects();
  }
}
