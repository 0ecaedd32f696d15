package io.rdmareactive.rdma.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.test.StepVerifier;

class SinkHandoffTest {
  private final List<String> freed = new CopyOnWriteArrayList<>();
  private final AtomicInteger stopped = new AtomicInteger();

  private Mono<String> handingOver(AtomicReference<SinkHandoff<String>> out) {
    return Mono.create((MonoSink<String> sink) -> out.set(SinkHandoff.on(sink, freed::add, stopped::incrementAndGet)));
  }

  @Test
  void aValueMadeInTimeReachesTheSubscriberAndALaterCancelLeavesIt() {
    AtomicReference<SinkHandoff<String>> h = new AtomicReference<>();
    AtomicReference<String> got = new AtomicReference<>();
    Disposable d = handingOver(h).subscribe(got::set);
    assertThat(h.get().isCancelled()).isFalse();
    h.get().deliver("endpoint");
    d.dispose();
    assertThat(got).hasValue("endpoint");
    assertThat(freed).isEmpty();
    assertThat(stopped).hasValue(0);
  }

  @Test
  void aCancelBeforeTheValueStopsTheMakingAndAValueMadeAfterIsFreed() {
    AtomicReference<SinkHandoff<String>> h = new AtomicReference<>();
    Disposable d = handingOver(h).subscribe(v -> { throw new AssertionError("emitted " + v); });
    d.dispose();
    assertThat(stopped).hasValue(1);
    assertThat(h.get().isCancelled()).isTrue();
    h.get().deliver("late");
    assertThat(freed).containsExactly("late");
  }

  /** Handed over before its subscriber requested it, the sink holds the value: a cancel then frees it, once. */
  @Test
  void aValueHandedOverButNotYetRequestedIsFreedByTheCancel() {
    AtomicReference<SinkHandoff<String>> h = new AtomicReference<>();
    List<Object> discarded = new CopyOnWriteArrayList<>();
    StepVerifier.create(handingOver(h).doOnDiscard(String.class, discarded::add), 0)
        .then(() -> h.get().deliver("unrequested"))
        .thenCancel()
        .verify(Duration.ofSeconds(10));
    assertThat(freed).containsExactly("unrequested");
    assertThat(stopped).hasValue(0);
    // The sink discards it too, to hooks that are not the provider's: freeing is the hand-off's.
    assertThat(discarded).containsExactly("unrequested");
  }

  /** A cancel racing the hand-over, 200 times: the value is emitted or freed, exactly once, never both nor neither. */
  @Test
  void aCancelRacingTheHandOverLosesNothing() throws Exception {
    for (int round = 0; round < 200; round++) {
      freed.clear();
      AtomicReference<SinkHandoff<String>> h = new AtomicReference<>();
      List<String> got = new CopyOnWriteArrayList<>();
      Disposable d = handingOver(h).subscribe(got::add);
      CountDownLatch go = new CountDownLatch(1);
      Thread canceller = new Thread(() -> {
        await(go);
        d.dispose();
      }, "canceller");
      canceller.start();
      go.countDown();
      h.get().deliver("raced");
      canceller.join(10_000);
      assertThat(canceller.isAlive()).isFalse();
      assertThat(got.size() + freed.size()).as("round %d: emitted %s, freed %s", round, got, freed).isEqualTo(1);
    }
  }

  private static void await(CountDownLatch l) {
    try {
      l.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
