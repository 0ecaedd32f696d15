package io.rdmareactive.rsocket;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.publisher.Operators;
import reactor.util.concurrent.Queues;

/**
 * The frames RSocket sends, as the one publisher given to {@code RdmaOutbound.send}: RSocket
 * pushes frames from any thread ({@code DuplexConnection.sendFrame} has no flow control), the
 * transport pulls them only as the peer grants credits and send buffers are free. The frames in
 * between wait here, at most {@code capacity} of them: {@link #offer} refuses more (the
 * connection then closes with an error) rather than queueing without bound. Each frame is copied
 * out and released when the transport asks for it, so a frame is held only while it waits here.
 */
final class FrameSender implements Publisher<byte[]>, Subscription {
  /** Multi-producer; bounded by {@link #queued}. */
  private final Queue<ByteBuf> queue = Queues.<ByteBuf>unboundedMultiproducer().get();
  private final AtomicInteger queued = new AtomicInteger();
  private final AtomicInteger wip = new AtomicInteger();
  private final AtomicLong requested = new AtomicLong();
  private final AtomicBoolean subscribed = new AtomicBoolean();
  private final int capacity;
  private volatile @Nullable Subscriber<? super byte[]> actual;
  private volatile boolean done;
  private volatile boolean cancelled;
  private boolean terminated;

  FrameSender(int capacity) {
    this.capacity = capacity;
  }

  /**
   * Queues {@code frame} (taking ownership of it); false, with the frame released, when
   * {@code capacity} frames wait already. After completion or cancellation frames are released.
   */
  boolean offer(ByteBuf frame) {
    if (done || cancelled) {
      frame.release();
      return true;
    }
    if (queued.incrementAndGet() > capacity) {
      queued.decrementAndGet();
      frame.release();
      return false;
    }
    queue.offer(frame);
    drain();
    return true;
  }

  /** Completes once the frames queued so far were handed to the transport. */
  void complete() {
    done = true;
    drain();
  }

  /** Frames waiting for the transport. */
  int pending() {
    return queued.get();
  }

  @Override
  public void subscribe(Subscriber<? super byte[]> s) {
    if (!subscribed.compareAndSet(false, true)) {
      Operators.error(s, new IllegalStateException("FrameSender allows one subscriber"));
      return;
    }
    actual = s;
    s.onSubscribe(this);
    drain();
  }

  @Override
  public void request(long n) {
    if (Operators.validate(n)) {
      requested.getAndUpdate(r -> Operators.addCap(r, n));
      drain();
    }
  }

  @Override
  public void cancel() {
    cancelled = true;
    drain();
  }

  private void drain() {
    if (wip.getAndIncrement() != 0) {
      return;
    }
    int missed = 1;
    for (;;) {
      Subscriber<? super byte[]> a = actual;
      if (cancelled || terminated) {
        clear();
      } else if (a != null) {
        long r = requested.get();
        long e = 0;
        while (e != r && !cancelled) {
          ByteBuf frame = queue.poll();
          if (frame == null) {
            break;
          }
          queued.decrementAndGet();
          byte[] bytes;
          try {
            bytes = ByteBufUtil.getBytes(frame);
          } finally {
            frame.release();
          }
          a.onNext(bytes);
          e++;
        }
        if (e != 0 && r != Long.MAX_VALUE) {
          requested.addAndGet(-e);
        }
        if (cancelled) {
          clear();
        } else if (done && queue.isEmpty()) {
          terminated = true;
          a.onComplete();
          clear();
        }
      }
      missed = wip.addAndGet(-missed);
      if (missed == 0) {
        return;
      }
    }
  }

  private void clear() {
    ByteBuf frame;
    while ((frame = queue.poll()) != null) {
      queued.decrementAndGet();
      frame.release();
    }
  }
}
