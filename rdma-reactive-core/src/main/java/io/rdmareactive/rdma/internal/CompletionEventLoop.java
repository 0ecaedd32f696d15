package io.rdmareactive.rdma.internal;

import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.scheduler.NonBlocking;

/**
 * The event loop of one completion channel: a daemon thread that lives while the channel has
 * subscribed streams. Streams join and leave, and ask for drains, through lock-free queues plus
 * {@link CompletionChannel#wakeup()}; everything else (the stream table, arming state) is owned
 * by the thread. It waits on the channel with a bounded timeout, so that it notices shutdown even
 * on a provider that cannot wake it.
 */
final class CompletionEventLoop extends Thread implements NonBlocking {
  static final Duration WAIT = Duration.ofMillis(100);
  private static final AtomicInteger THREADS = new AtomicInteger();
  private static final Map<CompletionChannel, CompletionEventLoop> LOOPS = new IdentityHashMap<>();

  private final CompletionChannel channel;
  private final ConcurrentLinkedQueue<CompletionSubscription> added = new ConcurrentLinkedQueue<>();
  private final ConcurrentLinkedQueue<CompletionSubscription> removed = new ConcurrentLinkedQueue<>();
  private final ConcurrentLinkedQueue<CompletionSubscription> ready = new ConcurrentLinkedQueue<>();
  private final Map<CompletionQueue, CompletionSubscription> streams = new IdentityHashMap<>();

  private CompletionEventLoop(CompletionChannel channel) {
    super("rdma-cq-" + THREADS.incrementAndGet());
    this.channel = channel;
    setDaemon(true);
  }

  /** Adds {@code s} to its channel's loop, starting one when the channel has none. */
  static CompletionEventLoop register(CompletionSubscription s, CompletionChannel channel) {
    CompletionEventLoop loop;
    synchronized (LOOPS) {
      loop = LOOPS.get(channel);
      if (loop == null) {
        loop = new CompletionEventLoop(channel);
        LOOPS.put(channel, loop);
        loop.start();
      }
      loop.added.add(s);
    }
    channel.wakeup();
    return loop;
  }

  void schedule(CompletionSubscription s) {
    ready.add(s);
    channel.wakeup();
  }

  void deregister(CompletionSubscription s) {
    removed.add(s);
    channel.wakeup();
  }

  @Override
  public void run() {
    try {
      for (;;) {
        CompletionSubscription s;
        while ((s = added.poll()) != null) {
          if (s.isDone()) {
            continue;
          }
          streams.put(s.cq, s);
          s.armed = false;
          s.scheduled.set(true);
          ready.add(s); // first drain: poll, arm, poll
        }
        while ((s = removed.poll()) != null) {
          streams.remove(s.cq, s);
        }
        if (streams.isEmpty()) {
          synchronized (LOOPS) {
            if (added.isEmpty()) {
              LOOPS.remove(channel, this);
              return;
            }
          }
          continue;
        }
        while ((s = ready.poll()) != null) {
          s.drain();
        }
        if (!added.isEmpty() || !removed.isEmpty()) {
          continue;
        }
        if (awaitEvent()) {
          CompletionQueue cq;
          while ((cq = channel.nextEvent()) != null) {
            CompletionSubscription owner = streams.get(cq);
            if (owner == null) {
              try {
                cq.acknowledgeEvents(1); // a CQ whose stream is gone: nothing to do but acknowledge
              } catch (RuntimeException ignored) {
                // closed meanwhile
              }
              continue;
            }
            owner.onEvent();
            if (owner.scheduled.compareAndSet(false, true)) {
              ready.add(owner);
            }
          }
        }
      }
    } catch (Throwable t) {
      synchronized (LOOPS) {
        LOOPS.remove(channel, this);
      }
      // The channel failed (or was closed under us): end every stream it served.
      for (CompletionSubscription s : new ArrayList<>(streams.values())) {
        s.terminate(t);
      }
      CompletionSubscription s;
      while ((s = added.poll()) != null) {
        s.terminate(t);
      }
    }
  }

  /** The one place this non-blocking thread may block: waiting for the channel (BlockHound allows it). */
  private boolean awaitEvent() {
    return channel.awaitEvent(WAIT);
  }
}
