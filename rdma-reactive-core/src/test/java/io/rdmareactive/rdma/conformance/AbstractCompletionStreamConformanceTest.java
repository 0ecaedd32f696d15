package io.rdmareactive.rdma.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.ResourceBusyException;
import io.rdmareactive.rdma.ResourceClosedException;
import io.rdmareactive.rdma.WorkCompletionException;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.CompletionQueueOptions;
import io.rdmareactive.rdma.verbs.CompletionStreamOptions;
import io.rdmareactive.rdma.verbs.QueuePairConnectOptions;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.SendRequest;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import io.rdmareactive.rdma.verbs.IdleStrategy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.QueuePairOptions;
import io.rdmareactive.rdma.verbs.QueuePair;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/** Completion-stream behaviour every provider must show. Subclass with the provider's hooks. */
public abstract class AbstractCompletionStreamConformanceTest extends ConformanceHooks {
  private static final Duration TIMEOUT = Duration.ofSeconds(20);
  protected RdmaContext context;

  @BeforeEach
  void open() {
    context = openContext();
  }

  @AfterEach
  void closeContext() {
    context.close();
  }

  protected Loopback loopback(int depth, boolean channel) {
    return new Loopback(context, gidIndex(), depth, channel,
        QueuePairConnectOptions.defaults().withGidIndex(gidIndex()));
  }

  private static List<Long> ids(long from, long to) {
    return LongStream.range(from, to).boxed().toList();
  }

  @Test
  void deliversEveryCompletionInOrderInEventMode() {
    try (Loopback l = loopback(64, true)) {
      StepVerifier.create(l.cq.completions().map(WorkCompletion::wrId).take(200))
          .then(() -> l.writes(0, 200))
          .expectNextSequence(ids(0, 200))
          .expectComplete()
          .verify(TIMEOUT);
    }
  }

  @Test
  void requestOneDeliversExactlyOneAndThenWaits() {
    try (Loopback l = loopback(16, true)) {
      l.writes(0, 5);
      StepVerifier.create(l.cq.completions().map(WorkCompletion::wrId), 0)
          .thenRequest(1)
          .expectNext(0L)
          .expectNoEvent(Duration.ofMillis(200))
          .thenRequest(2)
          .expectNext(1L, 2L)
          .expectNoEvent(Duration.ofMillis(100))
          .thenCancel()
          .verify(TIMEOUT);
      assertThat(l.pollAvailable(50)).as("undemanded completions stay in the CQ")
          .extracting(WorkCompletion::wrId).containsExactly(3L, 4L);
    }
  }

  @Test
  void resumesWhenDemandReturnsAfterCompletionsPiledUp() {
    try (Loopback l = loopback(16, true)) {
      StepVerifier.create(l.cq.completions().map(WorkCompletion::wrId), 1)
          .then(() -> l.writes(0, 10))
          .expectNext(0L)
          .expectNoEvent(Duration.ofMillis(100))
          .thenRequest(Long.MAX_VALUE)
          .expectNextSequence(ids(1, 10))
          .then(() -> l.writes(10, 3))
          .expectNext(10L, 11L, 12L)
          .thenCancel()
          .verify(TIMEOUT);
    }
  }

  @Test
  void busyPollModeDeliversOnItsOwnThread() {
    try (Loopback l = loopback(32, false)) {
      Set<String> threads = ConcurrentHashMap.newKeySet();
      CompletionStreamOptions busy = CompletionStreamOptions.defaults()
          .withMode(CompletionStreamOptions.Mode.BUSY_POLL).withIdleStrategy(IdleStrategy.backoff());
      StepVerifier.create(l.cq.completions(busy).doOnNext(w -> threads.add(Thread.currentThread().getName()))
              .map(WorkCompletion::wrId).take(100))
          .then(() -> l.writes(0, 100))
          .expectNextSequence(ids(0, 100))
          .expectComplete()
          .verify(TIMEOUT);
      assertThat(threads).singleElement().asString().startsWith("rdma-poll-");
    }
  }

  @Test
  void eventModeWithoutAChannelIsRejected() {
    try (Loopback l = loopback(4, false)) {
      StepVerifier.create(l.cq.completions(CompletionStreamOptions.defaults()
              .withMode(CompletionStreamOptions.Mode.EVENT)))
          .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(IllegalArgumentException.class)
              .hasMessageContaining("channel"))
          .verify(TIMEOUT);
    }
  }

  @Test
  void oneSubscriberAtATime() {
    try (Loopback l = loopback(4, true)) {
      StepVerifier.create(l.cq.completions())
          .expectSubscription()
          .then(() -> StepVerifier.create(l.cq.completions())
              .expectError(IllegalStateException.class)
              .verify(TIMEOUT))
          .thenCancel()
          .verify(TIMEOUT);
      // after cancel the CQ takes a new subscriber
      StepVerifier.create(l.cq.completions().map(WorkCompletion::wrId).take(1))
          .then(() -> l.write(9))
          .expectNext(9L)
          .expectComplete()
          .verify(TIMEOUT);
    }
  }

  @Test
  void aSubscribedStreamLeasesItsQueueAndCancelReleasesIt() {
    try (Loopback l = loopback(4, true)) {
      CompletionQueue cq = context.createCompletionQueue(8, l.channel);
      StepVerifier.create(cq.completions())
          .expectSubscription()
          .then(() -> assertThatThrownBy(cq::close).isInstanceOf(ResourceBusyException.class))
          .thenCancel()
          .verify(TIMEOUT);
      cq.close(); // the lease went with the cancel, synchronously
      assertThat(cq.isClosed()).isTrue();
    }
  }

  @Test
  void theLeaseIsTakenOnSubscriptionNotAssembly() {
    try (Loopback l = loopback(4, true)) {
      CompletionQueue cq = context.createCompletionQueue(8, l.channel);
      Flux<WorkCompletion> assembled = cq.completions();
      cq.close(); // assembling took nothing
      StepVerifier.create(assembled).expectError(ResourceClosedException.class).verify(TIMEOUT);
    }
  }

  @Test
  void cancelMidStreamStopsPolling() {
    try (Loopback l = loopback(32, true)) {
      StepVerifier.create(l.cq.completions().map(WorkCompletion::wrId))
          .then(() -> l.writes(0, 5))
          .expectNextSequence(ids(0, 5))
          .thenCancel()
          .verify(TIMEOUT);
      l.writes(5, 5);
      assertThat(l.pollAvailable(200)).as("nothing polled them after the cancel")
          .extracting(WorkCompletion::wrId).containsExactlyElementsOf(ids(5, 10));
    }
  }

  @Test
  void failOnErrorEndsTheStreamWithTheFailedCompletion() {
    try (Loopback l = new Loopback(context, gidIndex(), 8, true,
        QueuePairConnectOptions.defaults().withGidIndex(gidIndex()).withRnrRetry(0))) {
      StepVerifier.create(l.cq.completions(CompletionStreamOptions.defaults().withFailOnError(true)))
          .then(() -> l.a.postSend(new SendRequest().send(4, l.mr, 0, 8))) // no receive posted
          .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(WorkCompletionException.class)
              .extracting(x -> ((WorkCompletionException) x).completion().wrId()).isEqualTo(4L))
          .verify(TIMEOUT);
    }
  }

  @Test
  void errorsAreOrdinaryItemsWithoutFailOnError() {
    try (Loopback l = new Loopback(context, gidIndex(), 8, true,
        QueuePairConnectOptions.defaults().withGidIndex(gidIndex()).withRnrRetry(0))) {
      StepVerifier.create(l.cq.completions().take(1))
          .then(() -> l.a.postSend(new SendRequest().send(4, l.mr, 0, 8)))
          .assertNext(w -> assertThat(w.isSuccess()).isFalse())
          .expectComplete()
          .verify(TIMEOUT);
    }
  }

  @Test
  void queuesOnDifferentChannelsAreServedByDifferentThreads() {
    try (Loopback one = loopback(16, true); Loopback two = loopback(16, true)) {
      Set<String> threads = ConcurrentHashMap.newKeySet();
      Flux<Long> both = Flux.merge(
          one.cq.completions().doOnNext(w -> threads.add("one:" + Thread.currentThread().getName())).take(10),
          two.cq.completions().doOnNext(w -> threads.add("two:" + Thread.currentThread().getName())).take(10))
          .map(WorkCompletion::wrId);
      StepVerifier.create(both)
          .then(() -> {
            one.writes(0, 10);
            two.writes(100, 10);
          })
          .expectNextCount(20)
          .expectComplete()
          .verify(TIMEOUT);
      assertThat(threads).hasSize(2).allMatch(t -> t.contains(":rdma-cq-"));
      assertThat(threads.stream().map(t -> t.substring(4)).distinct()).hasSize(2);
    }
  }

  @Test
  void queuesOnOneChannelShareItsThread() {
    try (Loopback l = loopback(16, true)) {
      CompletionQueue other = context.createCompletionQueue(CompletionQueueOptions.of(64).withChannel(l.channel));
      QueuePairConnectOptions opts = QueuePairConnectOptions.defaults().withGidIndex(gidIndex());
      QueuePair x = l.pd.createQueuePair(QueuePairOptions.reliable(other, 8));
      QueuePair y = l.pd.createQueuePair(QueuePairOptions.reliable(other, 8));
      try {
        x.connect(y.localAddress(opts), opts);
        y.connect(x.localAddress(opts), opts);
        Set<String> threads = ConcurrentHashMap.newKeySet();
        StepVerifier.create(Flux.merge(
                l.cq.completions().doOnNext(w -> threads.add(Thread.currentThread().getName())).take(5),
                other.completions().doOnNext(w -> threads.add(Thread.currentThread().getName())).take(5))
                .map(WorkCompletion::wrId))
            .then(() -> {
              l.writes(0, 5);
              SendRequest req = new SendRequest();
              for (int i = 0; i < 5; i++) {
                x.postSend(req.write(100 + i, l.mr, 0, 8, l.mr.address() + 16, l.mr.remoteKey()));
              }
            })
            .recordWith(java.util.ArrayList::new)
            .expectNextCount(10)
            .consumeRecordedWith(ids -> assertThat(ids).containsExactlyInAnyOrderElementsOf(
                List.of(0L, 1L, 2L, 3L, 4L, 100L, 101L, 102L, 103L, 104L)))
            .expectComplete()
            .verify(TIMEOUT);
        assertThat(threads).singleElement().asString().startsWith("rdma-cq-");
      } finally {
        x.close();
        y.close();
        other.close();
      }
    }
  }

  @Test
  void lifecycleHelpersReleaseOnCompleteErrorAndCancel() {
    Map<String, Integer> base = liveResources();
    Flux<WorkCompletion> streaming = context.withCompletionChannel(ch ->
        context.withCompletionQueue(CompletionQueueOptions.of(8).withChannel(ch), cq ->
            context.withProtectionDomain(pd -> cq.completions())));
    StepVerifier.create(streaming)
        .expectSubscription()
        .then(() -> assertThat(liveResources()).as("helpers allocate on subscription").isNotEqualTo(base))
        .thenCancel()
        .verify(TIMEOUT);
    assertThat(liveResources()).as("after cancel").isEqualTo(base);
    StepVerifier.create(context.withProtectionDomain(pd -> Flux.just(1, 2)))
        .expectNext(1, 2).expectComplete().verify(TIMEOUT);
    assertThat(liveResources()).as("after complete").isEqualTo(base);
    StepVerifier.create(context.withCompletionQueue(CompletionQueueOptions.of(4),
            cq -> Flux.error(new IllegalStateException("boom"))))
        .expectErrorMessage("boom").verify(TIMEOUT);
    assertThat(liveResources()).as("after error").isEqualTo(base);
  }

  @Test
  void aFailedCompletionEndsTheStreamAndTheHelpersReleaseEverything() {
    Map<String, Integer> base = liveResources();
    QueuePairConnectOptions opts = QueuePairConnectOptions.defaults().withGidIndex(gidIndex()).withRnrRetry(0);
    AtomicReference<Runnable> trigger = new AtomicReference<>();
    try (Arena arena = Arena.ofShared()) {
      MemorySegment memory = arena.allocate(64);
      Flux<WorkCompletion> flux = context.withCompletionChannel(ch ->
          context.withCompletionQueue(CompletionQueueOptions.of(16).withChannel(ch), cq ->
              context.withProtectionDomain(pd ->
                  pd.withMemoryRegion(memory, Access.local(), mr ->
                      pd.withQueuePair(QueuePairOptions.reliable(cq, 4), qp -> {
                        qp.connect(qp.localAddress(opts), opts); // to itself: no receive will be posted
                        trigger.set(() -> qp.postSend(new SendRequest().send(1, mr, 0, 8)));
                        return cq.completions(CompletionStreamOptions.defaults().withFailOnError(true));
                      })))));
      StepVerifier.create(flux)
          .expectSubscription()
          .then(() -> trigger.get().run())
          .expectError(WorkCompletionException.class)
          .verify(TIMEOUT);
    }
    assertThat(liveResources()).isEqualTo(base);
  }
}
