package io.rdmareactive.samples.pricing;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.samples.pricing.consumer.PriceConsumer;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/**
 * The Boot pricing pair in one JVM, configured only by properties: the consumer's quotes arrive
 * from the service over RDMA, for every symbol it asked for.
 */
abstract class AbstractPricingDemoTest {
  /** Spring properties selecting the provider and addresses under test. */
  protected abstract List<String> transportArgs();

  protected int quotes() {
    return 12;
  }

  protected Duration timeout() {
    return Duration.ofSeconds(30);
  }

  @Test
  void quotesForEverySubscribedSymbolArrive() {
    int n = quotes();
    String[] args = Stream.concat(transportArgs().stream(),
        Stream.of("--pricing.count=" + n, "--pricing.symbols=AAPL,MSFT,NVDA", "--pricing.interval=5ms"))
        .toArray(String[]::new);
    PricingDemo.withBoth(consumer -> {
      PriceConsumer prices = consumer.getBean(PriceConsumer.class);
      StepVerifier.create(prices.quotes())
          .recordWith(ArrayList::new)
          .expectNextCount(n)
          .consumeRecordedWith(qs -> {
            assertThat(qs).extracting(Quote::symbol).containsOnly("AAPL", "MSFT", "NVDA")
                .contains("AAPL", "MSFT", "NVDA");
            assertThat(qs).allSatisfy(q -> assertThat(q.price()).isGreaterThan(BigDecimal.ZERO));
            List<Long> seq = qs.stream().map(Quote::sequence).toList();
            assertThat(seq).isSorted().doesNotHaveDuplicates();
          })
          .expectComplete()
          .verify(timeout());
      StepVerifier.create(prices.done()).expectNext((long) n).expectComplete().verify(timeout());
    }, args);
  }
}
