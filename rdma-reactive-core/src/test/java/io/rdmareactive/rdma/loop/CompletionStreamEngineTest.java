package io.rdmareactive.rdma.loop;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.conformance.Loopback;
import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import io.rdmareactive.rdma.loop.CompletionStreams;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockingOperationError;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/** The event-loop engine under load and under BlockHound, on the in-memory provider. */
class CompletionStreamEngineTest {
  private RdmaContext context;

  @BeforeEach
  void open() {
    context = new InMemoryProvider().open("mem0");
  }

  @AfterEach
  void close() {
    context.close();
  }

  @Test
  void aSlowSubscriberOverAHundredThousandCompletionsLosesNone() {
    int total = 100_000;
    try (Loopback l = new Loopback(context, 0, 1024, true)) {
      AtomicLong inFlightMax = new AtomicLong();
      AtomicLong emitted = new AtomicLong();
      AtomicLong consumed = new AtomicLong();
      StepVerifier.create(l.cq.completions()
              .map(WorkCompletion::wrId)
              .doOnNext(id -> inFlightMax.accumulateAndGet(emitted.incrementAndGet() - consumed.get(), Math::max))
              .publishOn(Schedulers.boundedElastic(), 64)
              .doOnNext(id -> {
                consumed.incrementAndGet();
                if (id % 10_000 == 0) {
                  sleep(5); // slow: blocking is allowed on boundedElastic
                }
              })
              .take(total)
              .collectList())
          .then(() -> l.writes(0, total)) // waits for send-queue room: the subscriber paces it
          .assertNext(ids -> assertThat(ids).isEqualTo(LongStream.range(0, total).boxed().toList()))
          .expectComplete()
          .verify(Duration.ofSeconds(120));
      assertThat(inFlightMax.get()).as("never more than publishOn's prefetch ahead").isLessThanOrEqualTo(64);
      assertThat(CompletionStreams.isStreaming(l.cq)).isFalse();
    }
  }

  @Test
  void theEventLoopIsNonBlockingSoBlockingInOnNextIsReported() {
    try (Loopback l = new Loopback(context, 0, 8, true)) {
      AtomicBoolean nonBlocking = new AtomicBoolean();
      AtomicReference<String> thread = new AtomicReference<>();
      StepVerifier.create(l.cq.completions().doOnNext(wc -> {
            nonBlocking.set(Schedulers.isInNonBlockingThread());
            thread.set(Thread.currentThread().getName());
            sleep(1);
          }))
          .then(() -> l.write(1))
          .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(BlockingOperationError.class)
              .hasMessageContaining("Thread.sleep"))
          .verify(Duration.ofSeconds(10));
      assertThat(nonBlocking).isTrue();
      assertThat(thread.get()).startsWith("rdma-cq-");
      assertThat(CompletionStreams.isStreaming(l.cq)).as("the error released the CQ").isFalse();
    }
  }

  @Test
  void requestsFromOtherThreadsAreServedOnTheLoop() {
    try (Loopback l = new Loopback(context, 0, 8, true)) {
      l.writes(0, 3);
      List<String> threads = new java.util.concurrent.CopyOnWriteArrayList<>();
      StepVerifier.create(l.cq.completions().doOnNext(w -> threads.add(Thread.currentThread().getName())), 0)
          .then(() -> assertThat(threads).isEmpty())
          .thenRequest(3)
          .expectNextCount(3)
          .thenCancel()
          .verify(Duration.ofSeconds(10));
      assertThat(threads).hasSize(3).allMatch(t -> t.startsWith("rdma-cq-"));
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
