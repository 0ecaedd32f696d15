package io.rdmareactive.samples.pricing.service;

import io.rdmareactive.samples.pricing.Quote;
import io.rdmareactive.spring.boot.RdmaHandler;
import java.time.Duration;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import reactor.core.publisher.Flux;

/**
 * The pricing service: an RDMA server (configured by {@code application-pricing-service.properties},
 * started by the starter because of the handler bean) that streams prices for the symbols each
 * client subscribes to. A new subscription on the same connection replaces the previous one.
 */
@SpringBootApplication
public class PricingServiceApplication {
  public static final String PROFILE = "pricing-service";
  private static final Log log = LogFactory.getLog(PricingServiceApplication.class);

  public static void main(String[] args) {
    application().run(args);
  }

  /** The application, with its profile (and so its properties file). */
  public static SpringApplication application() {
    SpringApplication app = new SpringApplication(PricingServiceApplication.class);
    app.setAdditionalProfiles(PROFILE);
    app.setMainApplicationClass(PricingServiceApplication.class);
    return app;
  }

  @Bean
  PriceFeed priceFeed(@Value("${pricing.interval:10ms}") Duration interval) {
    return new PriceFeed(interval);
  }

  /** Each connection: subscriptions in, quotes out. */
  @Bean
  RdmaHandler pricingHandler(PriceFeed feed) {
    return (in, out) -> out.sendString(in.receiveString().switchMap(request -> {
      try {
        var symbols = Quote.symbols(request);
        log.info("subscription to " + symbols);
        return feed.quotes(symbols).map(Quote::encode);
      } catch (IllegalArgumentException e) {
        log.warn("bad request: " + e.getMessage());
        return Flux.just("ERROR " + e.getMessage());
      }
    }));
  }
}
