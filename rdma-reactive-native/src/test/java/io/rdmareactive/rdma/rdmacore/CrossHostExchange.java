package io.rdmareactive.rdma.rdmacore;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.conformance.NumberedMessages;
import io.rdmareactive.rdma.transport.RdmaInbound;
import io.rdmareactive.rdma.transport.RdmaMessage;
import io.rdmareactive.rdma.transport.RdmaOutbound;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * One side of a cross-host exchange: {@code count} numbered messages out while checking the
 * {@code count} that come in (exactly once, in order, byte for byte); the first wrong one is
 * recorded, not thrown on the connection's loop. {@link #awaitDone} waits for both halves.
 */
final class CrossHostExchange {
  private final int count;
  private final NumberedMessages check = new NumberedMessages();
  private final CountDownLatch received = new CountDownLatch(1);
  private final CountDownLatch sent = new CountDownLatch(1);
  private final AtomicReference<@Nullable Throwable> failure = new AtomicReference<>();
  private volatile long startNanos;
  private volatile long doneNanos;

  CrossHostExchange(int count) {
    this.count = count;
  }

  /** Sends and receives on one connection; completes when its inbound ends (the peer closed). */
  Mono<Void> run(RdmaInbound in, RdmaOutbound out) {
    startNanos = System.nanoTime();
    Mono<Void> sending = out.send(Flux.range(0, count).map(NumberedMessages::message))
        .doOnError(this::fail).doOnSuccess(v -> sent.countDown()).onErrorComplete();
    Mono<Void> receiving = in.receive().doOnNext(this::take).doOnError(this::fail).onErrorComplete()
        .doOnComplete(() -> {
          if (check.count() < count) {
            fail(new AssertionError("inbound ended after " + check.count() + " of " + count + " messages"));
          }
        }).then();
    return Mono.when(sending, receiving);
  }

  private void take(RdmaMessage m) {
    try {
      check.verify(m.toByteArray());
      if (check.count() == count) {
        doneNanos = System.nanoTime();
        received.countDown();
      } else if (check.count() > count) {
        throw new AssertionError("more than the " + count + " messages sent");
      }
    } catch (Throwable t) {
      fail(t);
    } finally {
      m.release();
    }
  }

  private void fail(Throwable t) {
    failure.compareAndSet(null, t);
    received.countDown();
    sent.countDown();
  }

  /** Messages that arrived in order so far. */
  long received() {
    return check.count();
  }

  /** Waits until every message went out acknowledged and every one came in, or fails saying which did not. */
  void awaitDone(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    boolean in = received.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    boolean out = sent.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    Throwable f = failure.get();
    if (f != null) {
      throw new AssertionError("after " + check.count() + " of " + count + " messages in: " + f, f);
    }
    assertThat(in).as("all %d messages in within %s (got %d)", count, timeout, check.count()).isTrue();
    assertThat(out).as("all %d messages out and acknowledged within %s", count, timeout).isTrue();
  }

  /** From the start to the last message in. */
  Duration elapsed() {
    return Duration.ofNanos(doneNanos - startNanos);
  }
}
