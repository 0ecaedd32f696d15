package io.rdmareactive.rdma.transport;

import java.time.Duration;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The blocking {@code bindNow}/{@code connectNow}: waits for a Mono of something that must be
 * freed (a server, a connection) up to a deadline, and loses none. {@code block(timeout)} would
 * drop one that came just as it gave up (its subscriber is disposed by then): here the value is
 * taken in a {@code doOnNext}, which no cancel skips, and one that comes after the wait gave up
 * is freed.
 */
final class BlockingHandoff {
  private BlockingHandoff() {}

  /**
   * {@code mono}'s value within {@code timeout}; {@code what} names the call in errors (an
   * IllegalStateException past the deadline; the Mono's own error, with the caller's stack
   * suppressed into it, as {@code block} does), and {@code free} frees a value that came too late.
   */
  static <T> T await(Mono<T> mono, Duration timeout, String what, Consumer<? super T> free) {
    if (Schedulers.isInNonBlockingThread()) {
      throw new IllegalStateException(what + " is blocking, which is not supported in thread "
          + Thread.currentThread().getName());
    }
    CompletableFuture<T> result = new CompletableFuture<>();
    Disposable waiting = mono.doOnNext(value -> {
      if (!result.complete(value)) {
        free.accept(value); // the wait gave up on it
      }
    }).subscribe(null, result::completeExceptionally,
        () -> result.completeExceptionally(new NoSuchElementException(what + " completed empty")));
    try {
      return result.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      IllegalStateException late = new IllegalStateException(what + " took longer than " + timeout.toMillis() + " ms");
      if (result.completeExceptionally(late)) {
        waiting.dispose();
        throw late;
      }
      return outcome(result, what); // it came meanwhile
    } catch (ExecutionException e) {
      throw failure(e.getCause(), what);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      waiting.dispose();
      if (!result.completeExceptionally(e)) {
        T value = result.handle((v, t) -> v).join();
        if (value != null) {
          free.accept(value);
        }
      }
      throw Exceptions.propagate(e);
    }
  }

  private static <T> T outcome(CompletableFuture<T> result, String what) {
    try {
      return result.join();
    } catch (CompletionException e) {
      throw failure(e.getCause(), what);
    }
  }

  private static RuntimeException failure(Throwable cause, String what) {
    RuntimeException e = Exceptions.propagate(cause);
    e.addSuppressed(new Exception("#" + what + " terminated with an error"));
    return e;
  }
}
