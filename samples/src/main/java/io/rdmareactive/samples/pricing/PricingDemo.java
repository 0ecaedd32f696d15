package io.rdmareactive.samples.pricing;

import io.rdmareactive.samples.pricing.consumer.PriceConsumer;
import io.rdmareactive.samples.pricing.consumer.PricingConsumerApplication;
import io.rdmareactive.samples.pricing.service.PricingServiceApplication;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Both Boot applications of the pricing pair in one JVM: the service on a free port, then the
 * consumer pointed at it; exits 0 once the consumer received {@code pricing.count} quotes
 * (default 20). Arguments are Spring properties for both, e.g. {@code --rdma.provider=native
 * --rdma.server.host=10.0.0.1 --rdma.clients.pricing.host=10.0.0.1 --pricing.count=50}.
 */
public final class PricingDemo {
  private PricingDemo() {}

  public static void main(String[] args) {
    long received = -1;
    try {
      received = run(Duration.ofMinutes(5), args);
    } catch (RuntimeException e) {
      System.err.println("pricing demo: FAILED: " + e);
    }
    System.out.println(received > 0 ? "pricing demo: OK, received " + received + " quotes" : "pricing demo: FAILED");
    System.exit(received > 0 ? 0 : 1);
  }

  /** Runs both, waits for the consumer's {@code pricing.count} quotes (default 20), closes both; how many arrived. */
  public static long run(Duration timeout, String... args) {
    long[] received = new long[1];
    List<String> all = new ArrayList<>(Arrays.asList(args));
    if (all.stream().noneMatch(a -> a.startsWith("--pricing.count="))) {
      all.add("--pricing.count=20");
    }
    withBoth(consumer -> {
      Long n = consumer.getBean(PriceConsumer.class).done().block(timeout);
      received[0] = n == null ? 0 : n;
    }, all.toArray(String[]::new));
    return received[0];
  }

  /**
   * Starts the service (on a free port unless {@code --rdma.server.port} is given), then the
   * consumer pointed at it, hands the consumer's context to {@code body}, and closes both.
   */
  public static void withBoth(Consumer<ConfigurableApplicationContext> body, String... args) {
    List<String> service = new ArrayList<>(Arrays.asList(args));
    if (service.stream().noneMatch(a -> a.startsWith("--rdma.server.port="))) {
      service.add("--rdma.server.port=0");
    }
    // Inside one JVM nothing needs to outlive main.
    service.add("--spring.main.keep-alive=false");
    try (ConfigurableApplicationContext server = PricingServiceApplication.application()
        .run(service.toArray(String[]::new))) {
      List<String> consumer = new ArrayList<>(Arrays.asList(args));
      consumer.add("--rdma.clients.pricing.port="
          + server.getEnvironment().getRequiredProperty("local.rdma.server.port"));
      try (ConfigurableApplicationContext client = PricingConsumerApplication.application()
          .run(consumer.toArray(String[]::new))) {
        body.accept(client);
      }
    }
  }
}
