package io.rdmareactive.samples.pricing.consumer;

import io.rdmareactive.samples.pricing.Quote;
import io.rdmareactive.spring.boot.RdmaClients;
import java.util.List;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.stereotype.Component;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Once the application is up: connects the {@code pricing} client, subscribes, logs each quote
 * and republishes it on {@link #quotes()}; after {@code pricing.count} quotes (0: never) it
 * disconnects and {@link #done()} completes.
 */
@Component
public class PriceConsumer implements ApplicationRunner, DisposableBean {
  private static final Log log = LogFactory.getLog(PriceConsumer.class);

  private final RdmaClients clients;
  private final List<String> symbols;
  private final long count;
  private final Sinks.Many<Quote> quotes;
  private final Sinks.One<Long> done = Sinks.one();
  private volatile Disposable running = () -> {};

  public PriceConsumer(RdmaClients clients, @Value("${pricing.symbols}") List<String> symbols,
      @Value("${pricing.count:0}") long count) {
    this.clients = clients;
    this.symbols = symbols;
    this.count = count;
    // Bounded runs keep every quote for late subscribers (a test); endless ones keep none.
    this.quotes = count > 0 ? Sinks.many().replay().all() : Sinks.many().multicast().directBestEffort();
  }

  @Override
  public void run(ApplicationArguments args) {
    Flux<Quote> stream = Flux.usingWhen(clients.connect("pricing"), c -> {
      log.info("connected to " + c.address() + ", subscribing to " + symbols);
      Mono<Void> subscribe = c.outbound().sendString(Mono.just(Quote.subscribe(symbols)));
      Flux<Quote> in = c.inbound().receiveString().map(Quote::parse);
      return Flux.merge(in, subscribe.then(Mono.<Quote>empty()));
    }, c -> {
      c.dispose();
      return c.onDispose();
    });
    if (count > 0) {
      stream = stream.take(count);
    }
    long[] n = new long[1];
    running = stream.subscribe(q -> {
      n[0]++;
      log.info("quote " + n[0] + (count > 0 ? "/" + count : "") + ": " + q.symbol() + " " + q.price());
      quotes.tryEmitNext(q);
    }, e -> {
      log.error("pricing stream failed", e);
      quotes.tryEmitError(e);
      done.tryEmitError(e);
    }, () -> {
      log.info("received " + n[0] + " quotes, disconnected");
      quotes.tryEmitComplete();
      done.tryEmitValue(n[0]);
    });
  }

  /** The quotes received (all of them, replayed, when {@code pricing.count} > 0). */
  public Flux<Quote> quotes() {
    return quotes.asFlux();
  }

  /** The number of quotes received, once {@code pricing.count} were (or the error that ended it). */
  public Mono<Long> done() {
    return done.asMono();
  }

  @Override
  public void destroy() {
    running.dispose();
  }
}
