package io.rdmareactive.samples.pricing.service;

import io.rdmareactive.samples.pricing.Quote;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import reactor.core.publisher.Flux;

/** Made-up prices: a random walk per symbol, one quote per interval, round-robin over the symbols. */
public class PriceFeed {
  private final Duration interval;

  public PriceFeed(Duration interval) {
    this.interval = interval;
  }

  /** An endless stream of quotes for {@code symbols}; each subscriber gets its own walk. */
  public Flux<Quote> quotes(List<String> symbols) {
    return Flux.defer(() -> {
      double[] prices = symbols.stream().mapToDouble(s -> 50 + Math.floorMod(s.hashCode(), 200)).toArray();
      SplittableRandom random = new SplittableRandom(symbols.hashCode());
      return Flux.interval(interval).onBackpressureDrop().map(tick -> {
        int i = (int) (tick % symbols.size());
        prices[i] = Math.max(0.01, prices[i] * (1 + (random.nextDouble() - 0.5) / 100));
        return new Quote(symbols.get(i), BigDecimal.valueOf(prices[i]).setScale(2, RoundingMode.HALF_EVEN), tick);
      });
    });
  }
}
