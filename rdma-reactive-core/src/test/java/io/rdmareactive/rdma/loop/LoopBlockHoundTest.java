package io.rdmareactive.rdma.loop;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

class LoopBlockHoundTest {
  @Test
  void sleepingOnAParallelThreadIsReported() {
    StepVerifier.create(Mono.fromCallable(() -> {
          Thread.sleep(1);
          return "slept";
        }).subscribeOn(Schedulers.parallel()))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(BlockingOperationError.class)
            .hasMessageContaining("Thread.sleep"))
        .verify(Duration.ofSeconds(10));
  }
}
