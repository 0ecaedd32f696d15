package io.rdmareactive.samples.pricing.consumer;

import java.time.Duration;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The pricing consumer: connects with the named client {@code pricing} (configured by
 * {@code application-pricing-consumer.properties}), subscribes to {@code pricing.symbols} and logs
 * the quotes. With {@code pricing.count} > 0 it exits after that many (code 0), otherwise runs
 * until killed.
 */
@SpringBootApplication
public class PricingConsumerApplication {
  public static final String PROFILE = "pricing-consumer";

  public static void main(String[] args) {
    ConfigurableApplicationContext ctx = application().run(args);
    PriceConsumer consumer = ctx.getBean(PriceConsumer.class);
    Long received = consumer.done().onErrorResume(e -> reactor.core.publisher.Mono.just(-1L))
        .block(Duration.ofMinutes(10));
    int code = received != null && received >= 0 ? 0 : 1;
    System.exit(SpringApplication.exit(ctx, () -> code));
  }

  public static SpringApplication application() {
    SpringApplication app = new SpringApplication(PricingConsumerApplication.class);
    app.setAdditionalProfiles(PROFILE);
    app.setMainApplicationClass(PricingConsumerApplication.class);
    return app;
  }
}
