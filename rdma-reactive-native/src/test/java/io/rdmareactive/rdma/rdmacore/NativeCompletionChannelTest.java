package io.rdmareactive.rdma.rdmacore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.conformance.LeakCheck;
import io.rdmareactive.rdma.ResourceClosedException;
import io.rdmareactive.rdma.conformance.Loopback;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.test.StepVerifier;

/** Wakeups and closing under a waiter, on a real device's completion channel. */
@Tag("native")
class NativeCompletionChannelTest {
  @RegisterExtension
  final LeakCheck leakCheck = NativeTestSupport.strictLeakCheck();

  private static final Duration LONG = Duration.ofSeconds(30);
  private RdmaContext ctx;

  @BeforeEach
  void open() {
    ctx = NativeTestSupport.open();
  }

  @AfterEach
  void close() {
    ctx.close();
  }

  @Test
  void wakeupEndsAWaitInProgress() throws Exception {
    CompletionChannel channel = ctx.createCompletionChannel();
    try {
      CompletableFuture<Long> waited = waitOn(channel, LONG);
      Thread.sleep(300); // let it block in poll(2)
      channel.wakeup();
      assertThat(waited.get(10, TimeUnit.SECONDS)).as("ms waited; false returned").isLessThan(10_000);
    } finally {
      channel.close();
    }
  }

  @Test
  void aWakeupBeforeTheWaitEndsTheNextWaitOnlyOnce() {
    CompletionChannel channel = ctx.createCompletionChannel();
    try {
      channel.wakeup();
      channel.wakeup(); // coalesced: one drain consumes both
      long t0 = System.nanoTime();
      assertThat(channel.awaitEvent(LONG)).isFalse();
      assertThat(millisSince(t0)).as("returned at once").isLessThan(10_000);
      t0 = System.nanoTime();
      assertThat(channel.awaitEvent(Duration.ofMillis(300))).as("the wakeup was consumed").isFalse();
      assertThat(millisSince(t0)).as("waited the full timeout").isGreaterThanOrEqualTo(290);
    } finally {
      channel.close();
    }
  }

  @Test
  void anEventReadyAlongsideAWakeupIsReported() {
    try (Loopback l = new Loopback(ctx, NativeTestSupport.usableGidIndex(ctx), 8, true)) {
      l.cq.requestNotification(false);
      l.write(1);
      l.pollAtLeast(1); // rxe queues the event as it adds the completion: it is there now
      l.channel.wakeup();
      assertThat(l.channel.awaitEvent(LONG)).as("the event, not just the wakeup").isTrue();
      assertThat(l.channel.nextEvent()).isSameAs(l.cq);
      l.cq.acknowledgeEvents(1);
      long t0 = System.nanoTime();
      assertThat(l.channel.awaitEvent(Duration.ofMillis(300))).as("both consumed").isFalse();
      assertThat(millisSince(t0)).isGreaterThanOrEqualTo(290);
    }
  }

  @Test
  void closingUnderAWaiterEndsTheWaitAndFreesBothFileDescriptors() throws Exception {
    long eventFds = fdsOfType("anon_inode:[eventfd]");
    long channelFds = fdsOfType("anon_inode:[infinibandevent]");
    for (int round = 0; round < 20; round++) {
      CompletionChannel channel = ctx.createCompletionChannel();
      if (round == 0) {
        assertThat(fdsOfType("anon_inode:[eventfd]")).as("positive control: the wakeup fd").isEqualTo(eventFds + 1);
        assertThat(fdsOfType("anon_inode:[infinibandevent]")).as("positive control: the channel fd")
            .isEqualTo(channelFds + 1);
      }
      CountDownLatch entering = new CountDownLatch(1);
      CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(() -> {
        entering.countDown();
        return channel.awaitEvent(LONG);
      }, r -> Thread.ofPlatform().name("waiter-" + System.nanoTime()).start(r));
      entering.await();
      if (round % 2 == 0) {
        Thread.sleep(50); // mostly inside poll(2); odd rounds race the close with entering it
      }
      long t0 = System.nanoTime();
      channel.close(); // wakes the waiter and waits only for it to leave, then frees the channel
      assertThat(millisSince(t0)).as("close did not wait for the waiter's timeout").isLessThan(5_000);
      assertThat(channel.isClosed()).isTrue();
      try {
        assertThat(waiter.get(10, TimeUnit.SECONDS)).as("a closed channel has no event").isFalse();
      } catch (java.util.concurrent.ExecutionException e) {
        // the close came before the waiter counted itself in: it found the channel closed
        assertThat(e.getCause()).isInstanceOf(ResourceClosedException.class);
      }
      channel.wakeup(); // after close: a no-op, not a write to a freed (maybe reused) fd
      assertThatThrownBy(() -> channel.awaitEvent(Duration.ZERO)).isInstanceOf(ResourceClosedException.class);
      assertThatThrownBy(channel::nextEvent).isInstanceOf(ResourceClosedException.class);
    }
    assertThat(fdsOfType("anon_inode:[eventfd]")).as("eventfds after closing").isEqualTo(eventFds);
    assertThat(fdsOfType("anon_inode:[infinibandevent]")).as("channel fds after closing").isEqualTo(channelFds);
  }

  @Test
  void requestsAreServedWithoutWaitingForTheLoopsTimeout() {
    // Each request(1) reaches the loop through wakeup(); without it each would wait out the loop's
    // 100 ms wait, so 50 of them would take 5 s or more.
    int n = 50;
    try (Loopback l = new Loopback(ctx, NativeTestSupport.usableGidIndex(ctx), 64, true)) {
      l.writes(0, n);
      sleep(200); // let the writes land
      StepVerifier.Step<Long> step = StepVerifier.create(l.cq.completions().map(WorkCompletion::wrId), 0)
          .thenRequest(1).expectNext(0L);
      long[] t0 = new long[1];
      step = step.then(() -> t0[0] = System.nanoTime());
      for (long i = 1; i < n; i++) {
        step = step.thenRequest(1).expectNext(i);
      }
      step.then(() -> {
            long ms = millisSince(t0[0]);
            System.out.printf("%d request(1) round trips in %d ms%n", n - 1, ms);
            assertThat(ms).as("%d request(1) round trips, ms", n - 1).isLessThan(3_000);
          })
          .thenCancel()
          .verify(LONG);
    }
  }

  private static CompletableFuture<Long> waitOn(CompletionChannel channel, Duration timeout) {
    return CompletableFuture.supplyAsync(() -> {
      long t0 = System.nanoTime();
      assertThat(channel.awaitEvent(timeout)).isFalse();
      return millisSince(t0);
    }, r -> Thread.ofPlatform().name("waiter").start(r));
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  private static long millisSince(long t0) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
  }

  /** Open fds of this JVM whose link reads {@code target}. */
  private static long fdsOfType(String target) throws IOException {
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      return fds.filter(fd -> {
        try {
          return Files.readSymbolicLink(fd).toString().equals(target);
        } catch (IOException e) {
          return false; // closed meanwhile (the listing's own fd)
        }
      }).count();
    }
  }
}
