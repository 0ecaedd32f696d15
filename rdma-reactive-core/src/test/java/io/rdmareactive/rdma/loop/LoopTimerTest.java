package io.rdmareactive.rdma.loop;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.RdmaContext;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/** A loop's timers and tasks, on its thread, and the loop's own end. */
class LoopTimerTest {
  private RdmaContext context;
  private CompletionChannel channel;
  private CompletionQueue cq;
  private CompletionEventLoop loop;

  @BeforeEach
  void open() {
    context = new InMemoryProvider().open("mem0");
    channel = context.createCompletionChannel();
    cq = context.createCompletionQueue(4, channel);
  }

  @AfterEach
  void close() {
    cq.close();
    if (loop != null) {
      loop.shutdown();
      loop.onStopped().block(Duration.ofSeconds(10));
    }
    channel.close();
    context.close();
  }

  private CompletionEventLoop start(String name, Duration pollBudget) {
    loop = CompletionEventLoop.owned(name, channel, pollBudget, null);
    return loop;
  }

  @Test
  void aTimerRunsOnceOnTheLoopThreadAfterItsDelayAndAStoppedLoopEndsItsThreadAndClosesItsChannel() throws Exception {
    CompletionEventLoop l = start("timer-loop-1", Duration.ofNanos(50_000));
    CompletableFuture<String> ranOn = new CompletableFuture<>();
    long start = System.nanoTime();
    l.schedule(() -> ranOn.complete(Thread.currentThread().getName()), Duration.ofMillis(150));
    assertThat(ranOn.get(10, TimeUnit.SECONDS)).isEqualTo("timer-loop-1");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(150));
    cq.close(); // the channel's last CQ
    l.shutdown();
    l.onStopped().block(Duration.ofSeconds(10));
    awaitNoThread("timer-loop-1");
    assertThat(channel.isClosed()).as("the loop owned its channel").isTrue();
    assertThat(l.execute(() -> {})).as("a stopped loop takes no task: the caller runs it").isFalse();
  }

  @Test
  void aCancelledTimerNeverRunsAndALaterOneStillDoes() throws Exception {
    CompletionEventLoop l = start("timer-loop-2", Duration.ZERO);
    AtomicBoolean cancelledRan = new AtomicBoolean();
    Disposable d = l.schedule(() -> cancelledRan.set(true), Duration.ofMillis(100));
    CompletableFuture<Void> later = new CompletableFuture<>();
    l.schedule(() -> later.complete(null), Duration.ofMillis(300));
    d.dispose();
    assertThat(d.isDisposed()).isTrue();
    later.get(10, TimeUnit.SECONDS);
    assertThat(cancelledRan).isFalse();
  }

  @Test
  void aTimerOrTaskThatThrowsEvenAnErrorDoesNotStopTheLoop() throws Exception {
    CompletionEventLoop l = start("timer-loop-3", Duration.ZERO);
    l.schedule(() -> {
      throw new IllegalStateException("a timer task failing on purpose");
    }, Duration.ofMillis(10));
    l.execute(() -> {
      throw new OutOfMemoryError("test");
    });
    CompletableFuture<String> next = new CompletableFuture<>();
    l.schedule(() -> next.complete(Thread.currentThread().getName()), Duration.ofMillis(100));
    assertThat(next.get(10, TimeUnit.SECONDS)).isEqualTo("timer-loop-3");
  }

  @Test
  void aCancelledTimerDropsItsTaskLongBeforeItsDeadline() {
    CompletionEventLoop l = start("timer-loop-4", Duration.ZERO);
    WeakReference<Object> ref = scheduleHolding(l, new Object()).get();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (ref.get() != null && System.nanoTime() < deadline) {
      System.gc();
      LockSupport.parkNanos(20_000_000);
    }
    assertThat(ref.get()).as("what the cancelled timer's task held").isNull();
  }

  @Test
  void tasksRunOnTheLoopInOrder() throws Exception {
    CompletionEventLoop l = start("timer-loop-5", Duration.ZERO);
    StringBuffer order = new StringBuffer();
    CompletableFuture<String> done = new CompletableFuture<>();
    l.execute(() -> order.append('a'));
    l.execute(() -> order.append('b'));
    l.execute(() -> done.complete(Thread.currentThread().getName()));
    assertThat(done.get(10, TimeUnit.SECONDS)).isEqualTo("timer-loop-5");
    assertThat(order).hasToString("ab");
  }

  /** Schedules a day-long timer whose task holds {@code held}, cancels it, and returns a weak reference to it. */
  private static java.util.function.Supplier<WeakReference<Object>> scheduleHolding(CompletionEventLoop l, Object held) {
    WeakReference<Object> ref = new WeakReference<>(held);
    Disposable d = l.schedule(() -> held.hashCode(), Duration.ofDays(1));
    d.dispose();
    return () -> ref;
  }

  private static void awaitNoThread(String name) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals(name))) {
      assertThat(System.nanoTime()).as("thread %s still alive", name).isLessThan(deadline);
      LockSupport.parkNanos(10_000_000);
    }
  }
}
