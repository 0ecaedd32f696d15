package io.rdmareactive.samples.rsocket;

import org.springframework.messaging.handler.annotation.MessageMapping;
import org.springframework.stereotype.Controller;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A plain Spring RSocket controller: nothing in it knows the transport. Served over TCP or, with
 * {@code rdma.rsocket.server.enabled=true}, over RDMA.
 */
@Controller
public class GreetingController {
  /** Request-response. */
  @MessageMapping("greet")
  public Mono<String> greet(String name) {
    return Mono.just("Hello, " + name + "!");
  }

  /** Request-stream: {@code count} ticks, as fast as the requester's REQUEST_N allows. */
  @MessageMapping("ticks")
  public Flux<Tick> ticks(Integer count) {
    if (count < 0) {
      return Flux.error(new IllegalArgumentException("count must not be negative: " + count));
    }
    return Flux.range(0, count).map(i -> new Tick(i, "tick " + i));
  }
}
