package io.rdmareactive.rdma.loop;

import io.rdmareactive.rdma.ResourceClosedException;
import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.IdleStrategy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.NonBlocking;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * A loop: one daemon thread that serves the CQs of one completion channel. Its owner makes it
 * ({@link #owned}: the transport's {@code RdmaLoopResources}, which stops it with
 * {@link #shutdown()}; {@link #forStreams}: a verbs completion stream's, which ends when it has
 * nothing left to serve) and it closes its channel when it ends. Handlers join and leave
 * ({@link #register}), ask for drains, hand it tasks ({@link #execute}) and timers
 * ({@link #schedule}) through lock-free queues plus {@link CompletionChannel#wakeup()};
 * everything else (the CQ table, arming state, the timer heap) is owned by the thread. It waits on
 * the channel with a bounded timeout, so that it notices shutdown even on a provider that cannot
 * wake it.
 *
 * <p>A handler that throws costs its registration, never the loop: the loop and its other CQs go
 * on. Timers are one-shot and cancellable; a cancelled one drops its task at once, so what the task
 * would have touched is not kept reachable until its deadline.
 */
public final class CompletionEventLoop extends Thread implements NonBlocking {
  static final Duration WAIT = Duration.ofMillis(100);
  private static final Logger log = Loggers.getLogger(CompletionEventLoop.class);

  /** Null for a busy-polling verbs stream over a CQ without a channel. */
  private final @Nullable CompletionChannel channel;
  /** How long it polls after the last completion before it sleeps; negative: never sleeps while serving. */
  private final long pollBudgetNanos;
  private final PollSpin spin;
  /** A verbs stream's loop: ends once it serves no CQ and has no timer or task. */
  private final boolean endWhenIdle;

  final ConcurrentLinkedQueue<CompletionRegistration> ready = new ConcurrentLinkedQueue<>();
  private final ConcurrentLinkedQueue<CompletionRegistration> added = new ConcurrentLinkedQueue<>();
  private final ConcurrentLinkedQueue<CompletionRegistration> removed = new ConcurrentLinkedQueue<>();
  private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  final LoopTimers timers = new LoopTimers();
  /** Runs the task of a due timer: made once, so a round of the loop allocates nothing. */
  private final java.util.function.Consumer<Runnable> runTimer = this::runTask;
  private final Map<CompletionQueue, CompletionRegistration> served = new IdentityHashMap<>(); // loop thread only
  private final List<CompletionRegistration> servedList = new ArrayList<>(); // loop thread only, for the spin
  /** Guards {@link #ended} against what is added meanwhile, so nothing is queued to a loop that has ended. */
  private final Object endLock = new Object();
  private boolean ended; // guarded by endLock
  volatile boolean stopping;
  private final Sinks.Empty<Void> stopped = Sinks.empty();

  private CompletionEventLoop(String name, @Nullable CompletionChannel channel, long pollBudgetNanos,
      @Nullable IdleStrategy idleStrategy, boolean endWhenIdle) {
    super(name);
    this.channel = channel;
    this.pollBudgetNanos = pollBudgetNanos;
    this.spin = new PollSpin(this, servedList, pollBudgetNanos, idleStrategy != null ? idleStrategy.copy() : null);
    this.endWhenIdle = endWhenIdle;
    setDaemon(true);
  }

  /**
   * A started loop named {@code name} that waits on {@code channel}, owns it from now on, and runs
   * until {@link #shutdown()}. It polls the CQs with demand for {@code pollBudget} after the last
   * completion before it arms the channel and sleeps (null: never sleeps while it serves a CQ, a
   * busy-polling loop), with {@code idleStrategy} between empty rounds (null: a spin-wait hint).
   */
  public static CompletionEventLoop owned(String name, CompletionChannel channel, @Nullable Duration pollBudget,
      @Nullable IdleStrategy idleStrategy) {
    CompletionEventLoop loop = new CompletionEventLoop(name, channel, pollBudget == null ? -1 : pollBudget.toNanos(),
        idleStrategy, false);
    if (channel instanceof AbstractRdmaResource r) {
      r.claimConsumer(loop); // verbs streams on this channel join this loop
    }
    loop.start();
    return loop;
  }

  /** A verbs completion stream's loop, not started: it ends by itself once idle, leaving the channel open. */
  static CompletionEventLoop forStreams(String name, @Nullable CompletionChannel channel, long pollBudgetNanos,
      @Nullable IdleStrategy idleStrategy) {
    return new CompletionEventLoop(name, channel, pollBudgetNanos, idleStrategy, true);
  }

  /** The channel this loop waits on. */
  public @Nullable CompletionChannel channel() {
    return channel;
  }

  /** Whether CQs are armed when polled empty: event mode; a busy loop never sleeps on its channel. */
  boolean arms() {
    return channel != null && pollBudgetNanos >= 0;
  }

  /**
   * Any thread: makes this loop poll {@code cq} and hand its completions to {@code handler}, at
   * most {@code batch} per poll, from now until the registration is cancelled. The CQ is leased
   * meanwhile (closing it fails) and has no other consumer: a second registration fails with
   * {@link IllegalStateException}. Null, taking nothing, when this loop has ended.
   */
  public @Nullable CompletionRegistration register(CompletionQueue cq, CompletionHandler handler, int batch) {
    CompletionRegistration r = new CompletionRegistration(this, cq, handler, batch);
    AbstractRdmaResource resource = cq instanceof AbstractRdmaResource a ? a : null;
    if (resource != null && !resource.claimConsumer(r)) {
      throw new IllegalStateException(cq + " already has a completion stream subscriber; a CQ has one consumer at a time");
    }
    try {
      if (resource != null) {
        resource.acquireLease(); // fails here if the CQ is closed
      }
    } catch (RuntimeException e) {
      resource.releaseConsumer(r);
      throw e;
    }
    synchronized (endLock) {
      if (!ended) {
        added.add(r);
        wakeup();
        return r;
      }
    }
    r.finish(); // gives back the lease and the CQ
    return null;
  }

  /**
   * Any thread: runs {@code task} on this loop, as Reactor Netty hands work to a channel's event
   * loop. False when the loop has ended: the caller runs it itself.
   */
  public boolean execute(Runnable task) {
    synchronized (endLock) {
      if (ended) {
        return false;
      }
      tasks.add(task);
    }
    wakeup();
    return true;
  }

  /**
   * Any thread: runs {@code task} once after {@code delay} on this loop; dispose the result to
   * cancel it. On a loop that has ended the task never runs (its owner is gone with it).
   */
  public Disposable schedule(Runnable task, Duration delay) {
    Disposable t;
    synchronized (endLock) {
      if (ended) {
        log.debug("rdma-reactive: " + getName() + " has ended; a timer is dropped");
        return Disposables.disposed();
      }
      t = timers.add(task, delay);
    }
    wakeup();
    return t;
  }

  /** Whether the calling thread is this loop. */
  public boolean inLoop() {
    return Thread.currentThread() == this;
  }

  /**
   * Any thread: the loop ends once what is pending has run (its timers and tasks; the CQs it
   * still serves end now), and closes its channel.
   */
  public void shutdown() {
    stopping = true;
    if (channel != null) {
      channel.wakeup(); // even from the loop itself: it may be about to sleep with stopping set
    }
    LockSupport.unpark(this);
  }

  /** Completes once the loop's thread has ended (and its channel, if it owns one, is closed). */
  public Mono<Void> onStopped() {
    return stopped.asMono();
  }

  /**
   * Makes the loop notice what was just queued. Nothing on the loop's own thread: it checks its
   * queues before it sleeps, and a wakeup there would cost the next sleep an eventfd write, a
   * wait that returns at once and a read (three syscalls, on every in-loop request for more).
   */
  void wakeup() {
    if (inLoop()) {
      return;
    }
    if (channel != null) {
      channel.wakeup();
    }
    LockSupport.unpark(this); // a busy loop parked for want of demand
  }

  void deregister(CompletionRegistration r) {
    removed.add(r);
    wakeup();
  }

  @Override
  public void run() {
    Throwable failure = null;
    try {
      for (;;) {
        takeAdded();
        if (stopping) {
          // Stopped by its owner, its CQs gone: it still runs what is pending (a close's retry to
          // free what was busy, say), then ends.
          endServed(new ResourceClosedException(getName() + " (stopped)"));
          if (endIfIdle()) {
            return;
          }
        }
        CompletionRegistration r;
        while ((r = removed.poll()) != null) {
          served.remove(r.cq, r);
          servedList.remove(r);
        }
        timers.takeAdded();
        timers.runDue(runTimer);
        runTasks();
        if (served.isEmpty()) {
          if ((endWhenIdle || stopping) && endIfIdle()) {
            return;
          }
          if (!added.isEmpty() || timers.anyAdded() || !tasks.isEmpty()) {
            continue;
          }
          // Nothing to serve: sleep until the next timer (or until a CQ, timer or task comes).
        } else {
          int delivered = 0;
          while ((r = ready.poll()) != null) {
            delivered += r.drain();
          }
          spin.drained(delivered);
          if (pending()) {
            continue;
          }
          if (pollBudgetNanos != 0 && spin.spin()) {
            continue;
          }
        }
        long wait = timers.nanosToNext(WAIT.toNanos());
        if (wait == 0) {
          continue;
        }
        if (channel == null || !arms() || stopping) {
          // Busy: the CQs have no demand now, and none is armed. Stopping: the owner may have
          // closed the channel already; what is pending runs on time, then the loop ends.
          awaitDemand(wait);
          continue;
        }
        if (awaitEvent(channel, wait)) {
          spin.awoke();
          CompletionQueue cq;
          while ((cq = channel.nextEvent()) != null) {
            CompletionRegistration owner = served.get(cq);
            if (owner == null) {
              try {
                cq.acknowledgeEvents(1); // a CQ whose registration is gone: nothing to do but acknowledge
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
      failure = t;
      if (!stopping) {
        log.error("rdma-reactive: " + getName() + " failed; the CQs it served end with it", t);
      }
    } finally {
      end(failure);
    }
  }

  private void takeAdded() {
    CompletionRegistration r;
    while ((r = added.poll()) != null) {
      if (r.isDone()) {
        continue;
      }
      served.put(r.cq, r);
      servedList.add(r);
      r.scheduled.set(true);
      ready.add(r); // first drain: poll, arm, poll
    }
  }

  /** A verbs stream's loop: whether it has ended, with nothing to serve and nothing pending. */
  private boolean endIfIdle() {
    synchronized (endLock) {
      if (added.isEmpty() && !timers.anyAdded() && tasks.isEmpty() && timers.live() == 0) {
        ended = true;
        return true;
      }
    }
    return false;
  }

  /** The thread ends: what is still registered or queued ends with it, and the channel is released. */
  private void end(@Nullable Throwable failure) {
    synchronized (endLock) {
      ended = true;
    }
    takeAdded();
    endServed(failure != null && !stopping ? failure : new ResourceClosedException(getName() + " (stopped)"));
    timers.clear();
    Runnable task;
    while ((task = tasks.poll()) != null) {
      runTask(task); // a drain handed over just before the end: it runs here, as the caller would have
    }
    if (channel instanceof AbstractRdmaResource r) {
      r.releaseConsumer(this);
    }
    if (!endWhenIdle && channel != null) {
      try {
        channel.close(); // the loop owned it (its owner normally closed it already; close is idempotent)
      } catch (RuntimeException e) {
        log.warn("rdma-reactive: closing " + channel + " of " + getName() + " failed", e);
      }
    }
    stopped.tryEmitEmpty();
  }

  /** Ends every registration still served with {@code why}. */
  private void endServed(Throwable why) {
    if (servedList.isEmpty()) {
      return;
    }
    for (CompletionRegistration r : new ArrayList<>(servedList)) {
      r.terminate(why);
    }
    served.clear();
    servedList.clear();
  }

  private void runTasks() {
    Runnable task;
    while ((task = tasks.poll()) != null) {
      runTask(task);
    }
  }

  private void runTask(Runnable task) {
    try {
      task.run();
    } catch (Throwable e) {
      // An Error too: one connection's task must not take the loop and its neighbours down.
      log.error("rdma-reactive: a task on " + getName() + " failed", e);
    }
  }

  /** Whether a CQ is ready or something was queued to the loop: a spin ends for it. */
  boolean pending() {
    return !ready.isEmpty() || !added.isEmpty() || !removed.isEmpty() || timers.anyAdded() || !tasks.isEmpty();
  }

  /** The one place this non-blocking thread may block: waiting for the channel (BlockHound allows it). */
  private static boolean awaitEvent(CompletionChannel channel, long nanos) {
    return channel.awaitEvent(nanos == WAIT.toNanos() ? WAIT : Duration.ofNanos(nanos));
  }

  /**
   * A busy loop whose CQs have no demand, or that serves none: parks until a request, a CQ, a
   * task or a timer comes (BlockHound allows it here).
   */
  private void awaitDemand(long nanos) {
    LockSupport.parkNanos(this, nanos);
  }

  @Override
  public String toString() {
    return getName();
  }
}
