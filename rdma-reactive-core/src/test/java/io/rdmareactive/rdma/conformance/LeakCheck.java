package io.rdmareactive.rdma.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The one leak check of the suites ({@code @RegisterExtension}): counts a provider's live objects
 * by kind before each test and checks them after it, once the test's own {@code @AfterEach}
 * methods ran. {@link #strict} wants the same counts at once: for tests that free everything
 * synchronously. {@link #settling} waits up to a deadline until no kind has more live objects
 * than before, for connections that close asynchronously; fewer is fine there, since objects an
 * earlier test left closing may be freed meanwhile, and that is not this test's doing.
 */
public final class LeakCheck implements BeforeEachCallback, AfterEachCallback {
  private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(LeakCheck.class);

  private final Supplier<Map<String, Integer>> live;
  private final Duration settle;

  private LeakCheck(Supplier<Map<String, Integer>> live, Duration settle) {
    this.live = live;
    this.settle = settle;
  }

  /** The same counts after the test as before it, at once. */
  public static LeakCheck strict(Supplier<Map<String, Integer>> live) {
    return new LeakCheck(live, Duration.ZERO);
  }

  /** No kind above its count before the test, within {@code settle}. */
  public static LeakCheck settling(Supplier<Map<String, Integer>> live, Duration settle) {
    return new LeakCheck(live, settle);
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    context.getStore(NS).put(this, live.get());
  }

  @Override
  @SuppressWarnings("unchecked")
  public void afterEach(ExtensionContext context) {
    Map<String, Integer> before = (Map<String, Integer>) context.getStore(NS).get(this, Map.class);
    if (settle.isZero()) {
      assertThat(live.get()).as("live objects after %s", context.getDisplayName()).isEqualTo(before);
      return;
    }
    long deadline = System.nanoTime() + settle.toNanos();
    Map<String, Integer> now = live.get();
    while (!noneAbove(now, before) && System.nanoTime() < deadline) {
      LockSupport.parkNanos(20_000_000);
      now = live.get();
    }
    Map<String, Integer> after = now;
    assertThat(after.keySet()).as("live objects after %s: %s (before: %s)", context.getDisplayName(), after, before)
        .allSatisfy(kind -> assertThat(after.get(kind)).as(kind).isLessThanOrEqualTo(before.getOrDefault(kind, 0)));
  }

  /**
   * For suites outside JUnit (the TCK's TestNG classes): waits up to {@code within} until the live
   * objects are exactly {@code before} again, else fails naming both.
   */
  public static void awaitSame(Supplier<Map<String, Integer>> live, Map<String, Integer> before, Duration within) {
    long deadline = System.nanoTime() + within.toNanos();
    Map<String, Integer> after = live.get();
    while (!after.equals(before) && System.nanoTime() < deadline) {
      LockSupport.parkNanos(5_000_000);
      after = live.get();
    }
    if (!after.equals(before)) {
      throw new AssertionError("live verbs objects after the test: " + after + ", before: " + before);
    }
  }

  private static boolean noneAbove(Map<String, Integer> now, Map<String, Integer> before) {
    return now.entrySet().stream().allMatch(e -> e.getValue() <= before.getOrDefault(e.getKey(), 0));
  }
}
