package io.rdmareactive.rdma.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.RdmaContext;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/** Timers on a transport loop's thread (CompletionStreams.schedule), and their fallback. */
class LoopTimerTest {
  private RdmaContext context;
  private CompletionChannel channel;
  private CompletionQueue cq;

  @BeforeEach
  void open() {
    context = new InMemoryProvider().open("mem0");
    channel = context.createCompletionChannel();
    cq = context.createCompletionQueue(4, channel);
  }

  @AfterEach
  void close() {
    CompletionStreams.forgetLoop(channel);
    cq.close();
    channel.close();
    context.close();
  }

  @Test
  void aTimerRunsOnceOnTheLoopThreadAfterItsDelayAndTheIdleLoopThenEnds() throws Exception {
    CompletionStreams.configureLoop(channel, "timer-loop-1", Duration.ofNanos(50_000), null);
    CompletableFuture<String> ranOn = new CompletableFuture<>();
    long start = System.nanoTime();
    CompletionStreams.schedule(cq, () -> ranOn.complete(Thread.currentThread().getName()), Duration.ofMillis(150));
    assertThat(ranOn.get(10, TimeUnit.SECONDS)).isEqualTo("timer-loop-1");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(150));
    awaitNoThread("timer-loop-1"); // no stream and no timer left: the loop's thread ends
  }

  @Test
  void aCancelledTimerNeverRunsAndALaterOneStillDoes() throws Exception {
    CompletionStreams.configureLoop(channel, "timer-loop-2", Duration.ZERO, null);
    AtomicBoolean cancelledRan = new AtomicBoolean();
    Disposable d = CompletionStreams.schedule(cq, () -> cancelledRan.set(true), Duration.ofMillis(100));
    CompletableFuture<Void> later = new CompletableFuture<>();
    CompletionStreams.schedule(cq, () -> later.complete(null), Duration.ofMillis(300));
    d.dispose();
    assertThat(d.isDisposed()).isTrue();
    later.get(10, TimeUnit.SECONDS);
    assertThat(cancelledRan).isFalse();
  }

  @Test
  void aThrowingTimerDoesNotStopTheLoop() throws Exception {
    CompletionStreams.configureLoop(channel, "timer-loop-3", Duration.ZERO, null);
    CompletionStreams.schedule(cq, () -> {
      throw new IllegalStateException("a timer task failing on purpose");
    }, Duration.ofMillis(10));
    CompletableFuture<String> next = new CompletableFuture<>();
    CompletionStreams.schedule(cq, () -> next.complete(Thread.currentThread().getName()), Duration.ofMillis(100));
    assertThat(next.get(10, TimeUnit.SECONDS)).isEqualTo("timer-loop-3");
  }

  @Test
  void aCqOnNoTransportLoopHasItsTimersOnTheNamedFallbackThread() throws Exception {
    CompletableFuture<String> ranOn = new CompletableFuture<>();
    CompletionStreams.schedule(cq, () -> ranOn.complete(Thread.currentThread().getName()), Duration.ofMillis(10));
    assertThat(ranOn.get(10, TimeUnit.SECONDS)).startsWith("rdma-timer");
  }

  private static void awaitNoThread(String name) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals(name))) {
      assertThat(System.nanoTime()).as("thread %s still alive", name).isLessThan(deadline);
      LockSupport.parkNanos(10_000_000);
    }
  }
}
