package io.rdmareactive.rdma.internal;

import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.IdleStrategy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
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

  /** Names and poll budgets of channels that belong to a transport loop, by channel identity. */
  private static final Map<CompletionChannel, Settings> SETTINGS = new IdentityHashMap<>();

  private final long pollBudgetNanos;
  private final @Nullable IdleStrategy idleStrategy;

  private CompletionEventLoop(CompletionChannel channel, @Nullable Settings settings) {
    super(settings != null ? settings.threadName : "rdma-cq-" + THREADS.incrementAndGet());
    this.channel = channel;
    this.pollBudgetNanos = settings != null ? settings.pollBudgetNanos : 0;
    this.idleStrategy = settings != null && settings.idleStrategy != null ? settings.idleStrategy.copy() : null;
    setDaemon(true);
  }

  /**
   * Names the thread that will serve {@code channel} and sets its poll budget: how long it keeps
   * polling the CQs with demand after the last completion before it arms the channel and sleeps
   * (0: arm at once; negative: never, a busy-polling loop), with {@code idleStrategy} between
   * empty rounds (null: a spin-wait hint). Holds until {@link #forget}.
   */
  static void configure(CompletionChannel channel, String threadName, long pollBudgetNanos,
      @Nullable IdleStrategy idleStrategy) {
    synchronized (LOOPS) {
      SETTINGS.put(channel, new Settings(threadName, pollBudgetNanos, idleStrategy));
    }
  }

  static void forget(CompletionChannel channel) {
    synchronized (LOOPS) {
      SETTINGS.remove(channel);
    }
  }

  private record Settings(String threadName, long pollBudgetNanos, @Nullable IdleStrategy idleStrategy) {}

  /** Adds {@code s} to its channel's loop, starting one when the channel has none. */
  static CompletionEventLoop register(CompletionSubscription s, CompletionChannel channel) {
    CompletionEventLoop loop;
    synchronized (LOOPS) {
      loop = LOOPS.get(channel);
      if (loop == null) {
        loop = new CompletionEventLoop(channel, SETTINGS.get(channel));
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
        if (pollBudgetNanos != 0 && spin()) {
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

  /**
   * Polls the streams with demand until one delivers (true) or the budget passes without any
   * (false: arm and sleep), as Netty's epoll loop spins before epoll_wait. Streams stay armed
   * meanwhile; an event for a completion polled here only costs an empty drain later.
   */
  private boolean spin() {
    long start = System.nanoTime();
    do {
      for (CompletionSubscription s : streams.values()) {
        if (s.hasDemand() && s.drain() > 0) {
          if (idleStrategy != null) {
            idleStrategy.reset();
          }
          return true;
        }
      }
      if (!ready.isEmpty() || !added.isEmpty() || !removed.isEmpty()) {
        return true;
      }
      idle();
    } while (pollBudgetNanos < 0 || System.nanoTime() - start < pollBudgetNanos);
    return false;
  }

  /** Between empty polling rounds; the idle strategy may park (BlockHound allows it here). */
  private void idle() {
    if (idleStrategy != null) {
      idleStrategy.idle(0);
    } else {
      Thread.onSpinWait();
    }
  }

  /** The one place this non-blocking thread may block: waiting for the channel (BlockHound allows it). */
  private boolean awaitEvent() {
    return channel.awaitEvent(WAIT);
  }
}
