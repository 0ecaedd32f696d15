package io.rdmareactive.rsocket;

import io.netty.buffer.ByteBuf;
import io.rdmareactive.rdma.transport.OutboundMessage;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.IdentityHashMap;
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
 * between wait here, at most {@code capacity} of them and {@code capacityBytes} bytes of them (a
 * frame may be 16 MiB, so a count alone bounds nothing): {@link #offer} refuses more (the
 * connection then closes with an error) rather than queueing without bound. A frame whose bytes all
 * lie in the connection's {@link RegisteredByteBufAllocator} goes to the transport as a
 * {@link io.rdmareactive.rdma.transport.RegisteredMessage} gathered from them, with no copy, and is
 * released once its sends completed. Any other frame goes as a {@link Frame}, an
 * {@link OutboundMessage}: the transport copies the frame's bytes straight into its registered
 * send buffer when it posts it, and releases the frame then. (It
 * used to be copied into a new {@code byte[]} here first: an allocation, its zeroing and a
 * second copy per frame, which under Soft-RoCE in the VM cost as much as the send itself for
 * large frames; see benchmarks/README.md, issue #15.)
 */
final class FrameSender implements Publisher<OutboundMessage>, Subscription {
  /** Multi-producer; bounded by {@link #queued}. */
  private final Queue<OutboundMessage> queue = Queues.<OutboundMessage>unboundedMultiproducer().get();
  private final AtomicInteger queued = new AtomicInteger();
  private final AtomicLong queuedBytes = new AtomicLong();
  private final AtomicInteger wip = new AtomicInteger();
  private final AtomicLong requested = new AtomicLong();
  private final AtomicBoolean subscribed = new AtomicBoolean();
  private final int capacity;
  private final long capacityBytes;
  /** Where frames sent without a copy lie, or null: every frame is copied. */
  private final @Nullable RegisteredByteBufAllocator registered;
  private volatile @Nullable Subscriber<? super OutboundMessage> actual;
  private volatile boolean done;
  private volatile boolean cancelled;
  private boolean terminated;
  /**
   * A buffer view of each send buffer {@link Frame#copyTo} wrote to, which later copies reuse: the
   * transport copies from its drain, one thread at a time, so a cached view spares two objects per
   * fragment. Bounded: the send buffers a connection borrows from its loop's pool come as new
   * segments whenever a slot is bound to another buffer or chunk, so a cache of every one seen grew
   * for as long as the connection lived (IdentityHashMap.resize showed in a stream's profile).
   */
  private final IdentityHashMap<MemorySegment, ByteBuffer> views = new IdentityHashMap<>();
  /** At most this many views are cached; the cache starts again empty beyond it. */
  static final int MAX_VIEWS = 256;

  /** At most {@code capacity} frames and {@link RdmaClientTransport#DEFAULT_MAX_PENDING_BYTES} bytes wait. */
  FrameSender(int capacity) {
    this(capacity, RdmaClientTransport.DEFAULT_MAX_PENDING_BYTES, null);
  }

  /**
   * At most {@code capacity} frames and {@code capacityBytes} bytes wait (at least one frame,
   * however large); frames in {@code registered}'s memory go without a copy.
   */
  FrameSender(int capacity, long capacityBytes, @Nullable RegisteredByteBufAllocator registered) {
    this.capacity = capacity;
    this.capacityBytes = capacityBytes;
    this.registered = registered;
  }

  /** {@link #tryOffer}: queued (or released after completion or cancellation). */
  static final int QUEUED = 0;
  /** {@link #tryOffer}: refused, {@code capacity} frames wait already. */
  static final int OVER_FRAMES = 1;
  /** {@link #tryOffer}: refused, the frame would take what waits past {@code capacityBytes}. */
  static final int OVER_BYTES = 2;

  /**
   * Queues {@code frame} (taking ownership of it); false, with the frame released, when either
   * bound would be passed ({@link #tryOffer} says which). After completion or cancellation frames
   * are released.
   *
   * @throws IllegalStateException (Netty's {@code IllegalReferenceCountException}) when a part of a registered frame was
   *     released already (by the application, too early): the frame is dropped, released
   */
  boolean offer(ByteBuf frame) {
    return tryOffer(frame) == QUEUED;
  }

  /**
   * {@link #offer}, saying which bound refused the frame: {@link #QUEUED}, {@link #OVER_FRAMES} or
   * {@link #OVER_BYTES}, decided where it is refused (the counts read later may have moved: the
   * transport takes frames meanwhile, other threads offer).
   */
  int tryOffer(ByteBuf frame) {
    if (done || cancelled) {
      frame.release();
      return QUEUED;
    }
    int size = frame.readableBytes();
    if (queued.incrementAndGet() > capacity) {
      queued.decrementAndGet();
      frame.release();
      return OVER_FRAMES;
    }
    long bytes = queuedBytes.addAndGet(size);
    if (bytes > capacityBytes && bytes > size) { // a lone frame goes whatever its size: MAX_MESSAGE_SIZE bounds it
      queuedBytes.addAndGet(-size);
      queued.decrementAndGet();
      frame.release();
      return OVER_BYTES;
    }
    OutboundMessage m;
    try {
      m = toMessage(frame);
    } catch (RuntimeException e) {
      queuedBytes.addAndGet(-size);
      queued.decrementAndGet();
      releaseQuietly(frame);
      throw e;
    }
    queue.offer(m);
    drain();
    return QUEUED;
  }

  /** The frame as the transport takes it: from registered memory where it lies there, else to be copied. */
  private OutboundMessage toMessage(ByteBuf frame) {
    OutboundMessage m = registered == null ? null : registered.messageOf(frame);
    return m != null ? m : new Frame(this, frame);
  }

  private static void releaseQuietly(ByteBuf frame) {
    try {
      frame.release();
    } catch (IllegalStateException alreadyReleased) { // Netty's IllegalReferenceCountException
      // the application released it: nothing left to give back
    }
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

  /** Send buffer views cached for copies now (at most {@link #MAX_VIEWS}). */
  int cachedViews() {
    return views.size();
  }

  /** Bytes of the frames waiting for the transport. */
  long pendingBytes() {
    return queuedBytes.get();
  }

  @Override
  public void subscribe(Subscriber<? super OutboundMessage> s) {
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
      Subscriber<? super OutboundMessage> a = actual;
      if (cancelled || terminated) {
        clear();
      } else if (a != null) {
        long r = requested.get();
        long e = 0;
        while (e != r && !cancelled) {
          OutboundMessage frame = queue.poll();
          if (frame == null) {
            break;
          }
          queued.decrementAndGet();
          queuedBytes.addAndGet(-frame.length());
          a.onNext(frame); // the transport owns the frame from here: it releases it
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

  /** {@code target}'s bytes {@code [offset, offset + n)} as a buffer (the drain's thread, see {@link #views}). */
  private ByteBuffer view(MemorySegment target, long offset, int n) {
    ByteBuffer v = views.get(target);
    if (v == null) {
      if (target.byteSize() > Integer.MAX_VALUE) {
        return target.asSlice(offset, n).asByteBuffer();
      }
      v = target.asByteBuffer();
      if (views.size() >= MAX_VIEWS) {
        views.clear(); // the segments of buffers rebound since: most will not come again
      }
      views.put(target, v);
    }
    return v.limit((int) offset + n).position((int) offset);
  }

  private void clear() {
    OutboundMessage frame;
    while ((frame = queue.poll()) != null) {
      queued.decrementAndGet();
      queuedBytes.addAndGet(-frame.length());
      frame.release();
    }
  }

  /**
   * One frame on its way to the transport, which calls {@link #copyTo} per fragment from the
   * connection's drain and {@link #release} once; the frame is released then (or when dropped). One
   * small object per frame, where the copy out of the frame was a frame-sized array.
   */
  static final class Frame implements OutboundMessage {
    private final FrameSender sender;
    private @Nullable ByteBuf frame;
    private final int length;

    Frame(FrameSender sender, ByteBuf frame) {
      this.sender = sender;
      this.frame = frame;
      this.length = frame.readableBytes();
    }

    @Override
    public int length() {
      return length;
    }

    @Override
    public void copyTo(long offset, MemorySegment target, long targetOffset, int n) {
      ByteBuf f = frame;
      if (f == null) {
        throw new IllegalStateException("frame already released");
      }
      int index = f.readerIndex() + (int) offset;
      if (f.hasArray()) { // a heap frame: copied without a view object
        MemorySegment.copy(f.array(), f.arrayOffset() + index, target, ValueLayout.JAVA_BYTE, targetOffset, n);
      } else { // a composite (RSocket's header + payload) or direct frame: Netty copies each component
        f.getBytes(index, sender.view(target, targetOffset, n));
      }
    }

    @Override
    public void release() {
      ByteBuf f = frame;
      if (f != null) {
        frame = null;
        f.release();
      }
    }
  }
}
