package io.rdmareactive.benchmarks.jmh;

import java.util.concurrent.atomic.AtomicLong;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A publisher whose items are pushed by {@link #ping()} on the caller's thread, as a request/reply
 * client does: no queue, no scheduler, no allocation per item. One pinger per connection; callers
 * must not call {@link #ping()} concurrently (Reactive Streams serial signals), and should ping
 * only after the previous reply arrived.
 */
public final class Pinger<T> implements Publisher<T>, Subscription {
  private final T item;
  private final AtomicLong requested = new AtomicLong();
  private final AtomicLong pending = new AtomicLong();
  private volatile Subscriber<? super T> actual;
  private volatile boolean cancelled;

  public Pinger(T item) {
    this.item = item;
  }

  @Override
  public void subscribe(Subscriber<? super T> s) {
    actual = s;
    s.onSubscribe(this);
  }

  /** Emits the item now if the subscriber asked for one, else as soon as it does. */
  public void ping() {
    pending.incrementAndGet();
    emit();
  }

  @Override
  public void request(long n) {
    requested.getAndAdd(n);
    emit();
  }

  @Override
  public void cancel() {
    cancelled = true;
  }

  // Serialised by a work counter of its own: request() may come from the connection's thread.
  private final AtomicLong wip = new AtomicLong();

  private void emit() {
    if (wip.getAndIncrement() != 0) {
      return;
    }
    long missed = 1;
    for (;;) {
      Subscriber<? super T> a = actual;
      while (a != null && !cancelled && pending.get() > 0 && requested.get() > 0) {
        pending.decrementAndGet();
        requested.decrementAndGet();
        a.onNext(item);
      }
      missed = wip.addAndGet(-missed);
      if (missed == 0) {
        return;
      }
    }
  }
}
