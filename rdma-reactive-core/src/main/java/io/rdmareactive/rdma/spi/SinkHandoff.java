package io.rdmareactive.rdma.spi;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import reactor.core.publisher.MonoSink;

/**
 * Hands one value that must be freed (an endpoint, a bound server) from the task that makes it to
 * a {@link MonoSink}, exactly once: the sink emits it, or it is freed. A sink that a cancel meets
 * drops or discards the value, to hooks that are not the provider's, and never gives it back; so
 * the making side and the cancelling side each act only through one compare-and-set on who has it.
 *
 * <pre>{@code
 * return Mono.create(sink -> {
 *   CompletableFuture<Endpoint> pending = start();
 *   SinkHandoff<Endpoint> handoff = SinkHandoff.on(sink, Endpoint::close, () -> pending.cancel(false));
 *   pending.thenAccept(handoff::deliver);
 * });
 * }</pre>
 *
 * <p>The hand-off takes the sink's one {@code onCancel}: the sink must have no other. Call
 * {@link #deliver} at most once, and never after the sink was terminated another way (a value
 * given to a terminated sink is dropped, and no cancel comes to free it).
 *
 * @param <T> what is handed over
 */
public final class SinkHandoff<T> {
  private static final Object CANCELLED = new Object();

  /** null while the value is being made; then the value, handed to the sink; or CANCELLED. */
  private final AtomicReference<Object> state = new AtomicReference<>();
  private final MonoSink<T> sink;
  private final Consumer<? super T> free;

  private SinkHandoff(MonoSink<T> sink, Consumer<? super T> free) {
    this.sink = sink;
    this.free = free;
  }

  /**
   * Takes over {@code sink}'s cancel: one that comes before the value exists runs {@code
   * beforeValue} (stop making it; at once, inside this call, if the sink is cancelled already);
   * one that finds the value handed over but not emitted (its subscriber had not requested yet)
   * frees it. After the sink emitted, its cancel no longer reaches here: the value is its
   * subscriber's.
   */
  public static <T> SinkHandoff<T> on(MonoSink<T> sink, Consumer<? super T> free, Runnable beforeValue) {
    SinkHandoff<T> h = new SinkHandoff<>(Objects.requireNonNull(sink, "sink"), Objects.requireNonNull(free, "free"));
    Objects.requireNonNull(beforeValue, "beforeValue");
    sink.onCancel(() -> {
      Object had = h.state.getAndSet(CANCELLED);
      if (had == null) {
        beforeValue.run();
      } else if (had != CANCELLED) {
        @SuppressWarnings("unchecked")
        T value = (T) had;
        free.accept(value);
      }
    });
    return h;
  }

  /** Whether the sink was cancelled: a task that has not begun yet need not make the value. */
  public boolean isCancelled() {
    return state.get() == CANCELLED;
  }

  /** Emits {@code value}, or frees it when the sink was cancelled while it was made. */
  public void deliver(T value) {
    Objects.requireNonNull(value, "value");
    if (state.compareAndSet(null, value)) {
      sink.success(value);
    } else {
      free.accept(value);
    }
  }
}
