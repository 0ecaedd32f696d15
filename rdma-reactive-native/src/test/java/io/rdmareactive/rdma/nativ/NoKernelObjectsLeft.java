package io.rdmareactive.rdma.nativ;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * {@code @ExtendWith(NoKernelObjectsLeft.class)}: fails a device test after which this JVM has more
 * live verbs objects of some kind in the kernel ({@link KernelResources}) than before it, waiting
 * up to a minute for connections that close asynchronously (after the test's own
 * {@code @AfterEach}). Fewer is fine: objects an earlier test left behind may be freed meanwhile,
 * and that is not this test's doing.
 */
final class NoKernelObjectsLeft implements BeforeEachCallback, AfterEachCallback {
  private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(NoKernelObjectsLeft.class);
  private static final Duration SETTLE = Duration.ofSeconds(60);

  @Override
  public void beforeEach(ExtensionContext context) {
    context.getStore(NS).put("before", KernelResources.live());
  }

  @Override
  @SuppressWarnings("unchecked")
  public void afterEach(ExtensionContext context) {
    Map<String, Integer> before = (Map<String, Integer>) context.getStore(NS).get("before", Map.class);
    long deadline = System.nanoTime() + SETTLE.toNanos();
    Map<String, Integer> now = KernelResources.live();
    while (!noneAbove(now, before) && System.nanoTime() < deadline) {
      LockSupport.parkNanos(50_000_000);
      now = KernelResources.live();
    }
    Map<String, Integer> after = now;
    assertThat(after.keySet()).as("live verbs objects of this JVM after %s: %s (before: %s)",
            context.getDisplayName(), after, before)
        .allSatisfy(kind -> assertThat(after.get(kind)).as(kind).isLessThanOrEqualTo(before.getOrDefault(kind, 0)));
  }

  private static boolean noneAbove(Map<String, Integer> now, Map<String, Integer> before) {
    return now.entrySet().stream().allMatch(e -> e.getValue() <= before.getOrDefault(e.getKey(), 0));
  }
}
