package io.rdmareactive.rdma.nativ;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * {@code @ExtendWith(KernelLeakCheck.class)}: fails a device test that leaves more (or fewer)
 * live verbs objects of this JVM in the kernel than it found, per {@link KernelResources}.
 */
final class KernelLeakCheck implements BeforeEachCallback, AfterEachCallback {
  private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(KernelLeakCheck.class);

  @Override
  public void beforeEach(ExtensionContext context) {
    context.getStore(NS).put("before", KernelResources.live());
  }

  @Override
  @SuppressWarnings("unchecked")
  public void afterEach(ExtensionContext context) {
    Map<String, Integer> before = (Map<String, Integer>) context.getStore(NS).get("before", Map.class);
    assertThat(KernelResources.live()).as("live verbs objects of this JVM after %s", context.getDisplayName())
        .isEqualTo(before);
  }
}
