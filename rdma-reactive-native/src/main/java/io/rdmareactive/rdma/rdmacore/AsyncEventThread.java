package io.rdmareactive.rdma.rdmacore;

import static io.rdmareactive.rdma.rdmacore.VerbsLayout.ASYNC_EVENT_ELEMENT;
import static io.rdmareactive.rdma.rdmacore.VerbsLayout.ASYNC_EVENT_EVENT_TYPE;
import static io.rdmareactive.rdma.rdmacore.VerbsLayout.CONTEXT_ASYNC_FD;
import static io.rdmareactive.rdma.rdmacore.VerbsLayout.QP_QP_NUM;
import static io.rdmareactive.rdma.rdmacore.VerbsLayout.SIZEOF_ASYNC_EVENT;
import static io.rdmareactive.rdma.rdmacore.VerbsLayout.SIZEOF_QP;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.rdmareactive.rdma.verbs.AsyncEvent;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/**
 * A {@link NativeContext}'s asynchronous events (ibv_get_async_event), for its {@code asyncEvents}
 * subscribers: an opened device's are read on a daemon thread of its own until the context is
 * released; a borrowed one's are its owner's to read, so none come, only the end.
 */
final class AsyncEventThread {
  private static final AtomicInteger THREADS = new AtomicInteger();
  private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

  private final Sinks.Many<AsyncEvent> sink = Sinks.many().multicast().directBestEffort();
  /** Null for a borrowed context. */
  private final @Nullable Thread thread;
  private volatile boolean running = true;

  private AsyncEventThread(@Nullable MemorySegment ctx) {
    if (ctx == null) {
      thread = null;
      return;
    }
    int fd = ctx.get(JAVA_INT, CONTEXT_ASYNC_FD);
    Libc.setNonBlocking(fd);
    Thread t = Thread.ofPlatform().daemon().name("rdma-async-" + THREADS.incrementAndGet())
        .unstarted(() -> loop(ctx, fd));
    thread = t;
    t.start();
  }

  /**
   * Starts reading the events of {@code ctx}, an ibv_context this process opened; makes the
   * context's async fd non-blocking: the thread waits in poll(2), with a timeout, and a read
   * that finds no event (another reader took it) returns rather than blocking.
   */
  static AsyncEventThread start(MemorySegment ctx) {
    return new AsyncEventThread(ctx);
  }

  /** For a borrowed context: no thread, and no event but the end. */
  static AsyncEventThread none() {
    return new AsyncEventThread(null);
  }

  /** The events, multicast to whoever subscribes; they complete once the context is released. */
  Flux<AsyncEvent> events() {
    return sink.asFlux();
  }

  /**
   * Stops the reader, waiting up to 5 seconds for it, before the device is closed; throws when it
   * runs on (it keeps reading, and {@code deviceName} must be left open).
   */
  void stop(String deviceName) {
    running = false;
    try {
      if (thread != null) {
        thread.join(TimeUnit.SECONDS.toMillis(5));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (thread != null && thread.isAlive()) {
      running = true;
      throw new IllegalStateException(thread.getName() + " did not stop; " + deviceName + " left open");
    }
  }

  /** The context is released: subscribers complete. */
  void complete() {
    sink.tryEmitComplete();
  }

  private void loop(MemorySegment ctx, int fd) {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment event = a.allocate(SIZEOF_ASYNC_EVENT, 8);
      while (running) {
        if (!Libc.awaitReadable(fd, POLL_NANOS) || !running) {
          continue;
        }
        if (Ibverbs.getAsyncEvent(ctx, event) != 0) {
          continue; // EAGAIN: another reader or a spurious wakeup
        }
        int type = event.get(JAVA_INT, ASYNC_EVENT_EVENT_TYPE);
        AsyncEvent.Type t = AsyncEvent.Type.of(type);
        long element = switch (t) {
          case QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR, COMM_EST, SQ_DRAINED, PATH_MIG, PATH_MIG_ERR,
               QP_LAST_WQE_REACHED -> Integer.toUnsignedLong(
                   event.get(ADDRESS, ASYNC_EVENT_ELEMENT).reinterpret(SIZEOF_QP).get(JAVA_INT, QP_QP_NUM));
          case PORT_ACTIVE, PORT_ERR, LID_CHANGE, PKEY_CHANGE, SM_CHANGE, CLIENT_REREGISTER, GID_CHANGE,
               DEVICE_FATAL -> event.get(JAVA_INT, ASYNC_EVENT_ELEMENT);
          default -> event.get(JAVA_LONG, ASYNC_EVENT_ELEMENT);
        };
        // Acknowledge at once: ibv_destroy_qp/cq/srq wait for every event of theirs to be acknowledged.
        Ibverbs.ackAsyncEvent(event);
        sink.tryEmitNext(new AsyncEvent(t, type, element));
      }
    } catch (Throwable t) {
      sink.tryEmitError(t);
    }
  }
}
