package io.rdmareactive.rdma.rdmacore;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.conformance.CrossHost;
import io.rdmareactive.rdma.transport.RdmaInbound;
import io.rdmareactive.rdma.transport.RdmaMessage;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaOutbound;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * One guest's end of a connection that fails on purpose: an endless stream both ways (or an idle
 * connection), and the first failure either half meets, for the tests to time and type.
 */
final class CrossHostStream {
  private static final Duration WAIT = CrossHostEnds.WAIT;
  private static final long FLOWING = 200;

  private final AtomicLong received = new AtomicLong();
  private final AtomicReference<@Nullable Throwable> failure = new AtomicReference<>();
  private final CountDownLatch failed = new CountDownLatch(1);

  /** Numbers out forever, whatever comes in counted; a failure of either half recorded. */
  Mono<Void> stream(RdmaInbound in, RdmaOutbound out) {
    Mono<Void> sending = out.send(Flux.<byte[], Long>generate(() -> 0L, (i, sink) -> {
      sink.next(ByteBuffer.allocate(64).putLong(i).array());
      return i + 1;
    })).doOnError(this::fail).onErrorComplete();
    return Mono.when(sending, receive(in));
  }

  /** Sends nothing: a send that never comes holds the outbound open, so the connection's failure reaches it. */
  Mono<Void> idle(RdmaInbound in, RdmaOutbound out) {
    return Mono.when(out.send(Flux.never()).doOnError(this::fail).onErrorComplete(), receive(in));
  }

  private Mono<Void> receive(RdmaInbound in) {
    return in.receive().doOnNext(m -> {
      received.incrementAndGet();
      m.release();
    }).doOnError(this::fail).onErrorComplete().then();
  }

  private void fail(Throwable t) {
    failure.compareAndSet(null, t);
    failed.countDown();
  }

  void awaitFlowing() {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (received.get() < FLOWING) {
      assertThat(System.nanoTime() - deadline).as("%d messages in (got %d)", FLOWING, received.get()).isNegative();
      LockSupport.parkNanos(10_000_000);
    }
  }

  /** The first failure of this end, waiting up to {@code timeout} for it. */
  Throwable awaitFailure(Duration timeout) throws InterruptedException {
    assertThat(failed.await(timeout.toMillis(), TimeUnit.MILLISECONDS))
        .as("this end failed within %s (%d messages in so far)", timeout, received.get()).isTrue();
    return failure.get();
  }

  /** Streams both ways: guest a serves, guest b connects with {@code retryCount}; both keep alive. */
  CrossHostEnds open(CrossHost pair, int port, int retryCount, Duration keepalive) {
    return CrossHostEnds.open(pair, port, s -> s.option(RdmaOption.KEEPALIVE_INTERVAL, keepalive),
        c -> c.option(RdmaOption.RETRY_COUNT, retryCount).option(RdmaOption.KEEPALIVE_INTERVAL, keepalive),
        this::stream);
  }

  /** Idle both ways: only guest a (the server) keeps alive; guest b connects with {@code retryCount}. */
  CrossHostEnds openIdle(CrossHost pair, int port, int retryCount, Duration keepalive) {
    return CrossHostEnds.open(pair, port, s -> s.option(RdmaOption.KEEPALIVE_INTERVAL, keepalive),
        c -> c.option(RdmaOption.RETRY_COUNT, retryCount), this::idle);
  }
}
