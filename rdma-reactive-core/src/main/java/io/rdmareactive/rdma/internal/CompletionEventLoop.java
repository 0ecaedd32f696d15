package io.rdmareactive.rdma.internal;

import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.IdleStrategy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.scheduler.NonBlocking;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The event loop of one completion channel: a daemon thread that lives while the channel has
 * subscribed streams. Streams join and leave, and ask for drains, through lock-free queues plus
 * {@link CompletionChannel#wakeup()}; everything else (the stream table, arming state) is owned
 * by the thread. It waits on the channel with a bounded timeout, so that it notices shutdown even
 * on a provider that cannot wake it.
 *
 * <p>A transport loop also runs its connections' timers ({@link #schedule(CompletionChannel,
 * Runnable, long)}): one-shot, cancellable, run on this thread, which stays alive while any is
 * pending. Timers of channels that are not a transport loop's run on one named fallback thread.
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
  private final ConcurrentLinkedQueue<Timer> timersAdded = new ConcurrentLinkedQueue<>();
  private final PriorityQueue<Timer> timers = new PriorityQueue<>(); // loop thread only
  /** Timers scheduled and neither run nor cancelled: the loop stays while there are any. */
  private final AtomicInteger liveTimers = new AtomicInteger();
  private static final Logger log = Loggers.getLogger(CompletionEventLoop.class);
  private static volatile @Nullable Scheduler fallback;

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

  /**
   * Runs {@code task} once after {@code delayNanos} on the thread of {@code channel}'s transport
   * loop (started when it has none); null when {@code channel} is not a transport loop's.
   */
  static @Nullable Disposable schedule(CompletionChannel channel, Runnable task, long delayNanos) {
    CompletionEventLoop loop;
    Timer t;
    synchronized (LOOPS) {
      Settings settings = SETTINGS.get(channel);
      if (settings == null) {
        return null;
      }
      loop = LOOPS.get(channel);
      if (loop == null) {
        loop = new CompletionEventLoop(channel, settings);
        LOOPS.put(channel, loop);
        loop.start();
      }
      t = new Timer(loop, task, System.nanoTime() + Math.max(0, delayNanos));
      loop.liveTimers.incrementAndGet();
      loop.timersAdded.add(t);
    }
    channel.wakeup();
    return t;
  }

  /** Whether the calling thread is the transport loop that serves {@code channel}. */
  static boolean inLoop(CompletionChannel channel) {
    return Thread.currentThread() instanceof CompletionEventLoop l && l.channel == channel;
  }

  /** Where timers of channels without a transport loop run: one named daemon thread. */
  static Scheduler fallbackTimer() {
    Scheduler f = fallback;
    if (f == null) {
      synchronized (LOOPS) {
        f = fallback;
        if (f == null) {
          f = Schedulers.newSingle("rdma-timer", true);
          fallback = f;
        }
      }
    }
    return f;
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
        Timer t;
        while ((t = timersAdded.poll()) != null) {
          timers.add(t);
        }
        runDueTimers();
        if (streams.isEmpty()) {
          synchronized (LOOPS) {
            if (added.isEmpty() && timersAdded.isEmpty() && liveTimers.get() == 0) {
              LOOPS.remove(channel, this);
              timers.clear(); // cancelled ones only
              return;
            }
          }
          if (!added.isEmpty() || !timersAdded.isEmpty()) {
            continue;
          }
          // Only timers pending: sleep until the next one is due (or a stream or timer is added).
        } else {
          while ((s = ready.poll()) != null) {
            s.drain();
          }
          if (!added.isEmpty() || !removed.isEmpty() || !timersAdded.isEmpty()) {
            continue;
          }
          if (pollBudgetNanos != 0 && spin()) {
            continue;
          }
        }
        long wait = nanosToNextTimer();
        if (wait == 0) {
          continue;
        }
        if (awaitEvent(wait)) {
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
      handOverTimers();
    }
  }

  /** Runs the timers that are due; a task that throws is logged, and the loop goes on. */
  private void runDueTimers() {
    Timer t;
    while ((t = timers.peek()) != null && t.deadline - System.nanoTime() <= 0) {
      timers.poll();
      Runnable task = t.task;
      if (task != null && t.claim()) {
        try {
          task.run();
        } catch (Throwable e) {
          // An Error too: one connection's timer must not take the loop and its neighbours down.
          log.error("rdma-reactive: a timer on " + getName() + " failed", e);
        }
      }
    }
  }

  /** Nanoseconds until the next pending timer, at most {@link #WAIT}; 0 when one is due. */
  private long nanosToNextTimer() {
    Timer t = timers.peek();
    long wait = WAIT.toNanos();
    return t == null ? wait : Math.max(0, Math.min(wait, t.deadline - System.nanoTime()));
  }

  /** This loop ends with timers pending: they must still run, so the fallback thread takes them. */
  private void handOverTimers() {
    Timer t;
    while ((t = timersAdded.poll()) != null) {
      timers.add(t);
    }
    while ((t = timers.poll()) != null) {
      Runnable task = t.task;
      if (task != null && t.claim()) {
        fallbackTimer().schedule(task, Math.max(0, t.deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
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
      if (!ready.isEmpty() || !added.isEmpty() || !removed.isEmpty() || !timersAdded.isEmpty() || timerDue()) {
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

  private boolean timerDue() {
    Timer t = timers.peek();
    return t != null && t.deadline - System.nanoTime() <= 0;
  }

  /** The one place this non-blocking thread may block: waiting for the channel (BlockHound allows it). */
  private boolean awaitEvent(long nanos) {
    return channel.awaitEvent(nanos == WAIT.toNanos() ? WAIT : Duration.ofNanos(nanos));
  }

  /** A one-shot timer; pending until it runs or is cancelled, whichever claims it first. */
  private static final class Timer implements Disposable, Comparable<Timer> {
    private static final int PENDING = 0;
    private static final int DONE = 1;
    private final CompletionEventLoop loop;
    /** Null once run or cancelled: a cancelled entry waits in the heap for its deadline, holding nothing. */
    volatile @Nullable Runnable task;
    final long deadline;
    private final AtomicInteger state = new AtomicInteger(PENDING);

    Timer(CompletionEventLoop loop, Runnable task, long deadline) {
      this.loop = loop;
      this.task = task;
      this.deadline = deadline;
    }

    /** Whether this caller took it from pending (to run it or to cancel it). */
    boolean claim() {
      if (state.compareAndSet(PENDING, DONE)) {
        task = null; // what it would run (a connection, say) must not stay reachable till the deadline
        loop.liveTimers.decrementAndGet();
        return true;
      }
      return false;
    }

    @Override
    public void dispose() {
      claim(); // the entry stays in the heap until its deadline, or until the loop ends
    }

    @Override
    public boolean isDisposed() {
      return state.get() != PENDING;
    }

    @Override
    public int compareTo(Timer o) {
      return Long.compare(deadline - o.deadline, 0);
    }
  }
}
