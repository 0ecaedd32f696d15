package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.internal.CompletionStreams;
import io.rdmareactive.rdma.spi.CompletionChannelSource;
import io.rdmareactive.rdma.spi.ConnectionProvider;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.CompletionStreamOptions;
import io.rdmareactive.rdma.verbs.IdleStrategy;
import java.time.Duration;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.retry.Retry;

/**
 * The loops that serve connections' completions, shared by many connections: the part Reactor
 * Netty's {@code LoopResources} plays. Give them to servers and clients with
 * {@link RdmaServer#runOn} / {@link RdmaClient#runOn}; without, they run on {@link #shared()}.
 *
 * <p>A loop is one named thread ({@code <prefix>-<n>}) with one completion channel per device;
 * the CQs of every connection assigned to it attach to that channel, so the thread count is the
 * loop count (per device), whatever the number of connections. Connections are assigned
 * round-robin when they are created, as Netty's event-loop groups do: a connection's cost is
 * its traffic, which is not known when it is assigned, so least-loaded would buy little. All
 * of a connection's completions are handled on its loop.
 *
 * <ul>
 *   <li>{@link #create(String, int)}: event mode. A loop polls the CQs with demand for a short
 *       budget after the last completion ({@link #DEFAULT_POLL_BUDGET}), then arms the channel and
 *       sleeps, so ping-pong under load pays no kernel wakeup per message and idle loops sleep.
 *   <li>{@link #busyPoll(String, int, IdleStrategy)}: a loop never sleeps while it serves a
 *       connection; it polls all its CQs in turn with the idle strategy between empty rounds.
 *   <li>{@link #threadPerConnection(IdleStrategy)}: a spinning thread of its own per connection
 *       ({@code rdma-poll-N}), the lowest latency for a few connections.
 * </ul>
 *
 * <p>The threads are Reactor {@code NonBlocking} threads: handlers and subscribers run there and
 * must not block (move blocking work off with {@code publishOn}). A loop's channel for a device
 * is opened with its first connection there and closed with its last, so idle loops hold no
 * verbs objects and their threads end.
 */
public final class RdmaLoopResources implements Disposable {
  /** Event mode's default poll budget before a loop sleeps. */
  public static final Duration DEFAULT_POLL_BUDGET = Duration.ofNanos(50_000);

  /** max(cores, 4) loops, as Reactor Netty's default. */
  public static final int DEFAULT_LOOP_COUNT = Math.max(Runtime.getRuntime().availableProcessors(), 4);

  private static final Logger log = Loggers.getLogger(RdmaLoopResources.class);
  private static volatile @Nullable RdmaLoopResources shared;

  private final String prefix;
  private final Loop[] loops;
  private final @Nullable Duration pollBudget; // null: busy-poll
  private final @Nullable IdleStrategy idleStrategy;
  private final CompletionStreamOptions streamOptions;
  private final AtomicInteger next = new AtomicInteger();
  private volatile boolean disposed;

  private RdmaLoopResources(String prefix, int loopCount, @Nullable Duration pollBudget,
      @Nullable IdleStrategy idleStrategy, CompletionStreamOptions streamOptions) {
    this.prefix = Objects.requireNonNull(prefix, "prefix");
    this.loops = new Loop[loopCount];
    for (int i = 0; i < loopCount; i++) {
      loops[i] = new Loop(prefix + "-" + (i + 1));
    }
    this.pollBudget = pollBudget;
    this.idleStrategy = idleStrategy;
    this.streamOptions = streamOptions;
  }

  /** {@code loops} event-mode loops named {@code prefix-1..n}, with the default poll budget. */
  public static RdmaLoopResources create(String prefix, int loops) {
    return create(prefix, loops, DEFAULT_POLL_BUDGET);
  }

  /**
   * {@code loops} event-mode loops that poll for {@code pollBudget} after the last completion
   * before they sleep ({@link Duration#ZERO}: sleep at once, a kernel wakeup per completion).
   */
  public static RdmaLoopResources create(String prefix, int loops, Duration pollBudget) {
    checkCount(loops);
    if (pollBudget.isNegative()) {
      throw new IllegalArgumentException("pollBudget must be >= 0, was " + pollBudget);
    }
    return new RdmaLoopResources(prefix, loops, pollBudget, null, eventOptions());
  }

  /** {@code loops} busy-polling loops, {@code idleStrategy} between empty rounds. */
  public static RdmaLoopResources busyPoll(String prefix, int loops, IdleStrategy idleStrategy) {
    checkCount(loops);
    return new RdmaLoopResources(prefix, loops, null, Objects.requireNonNull(idleStrategy, "idleStrategy"),
        eventOptions());
  }

  /** A spinning thread per connection ({@code rdma-poll-N}), {@code idleStrategy} between empty polls. */
  public static RdmaLoopResources threadPerConnection(IdleStrategy idleStrategy) {
    return new RdmaLoopResources("rdma-poll", 0, null, idleStrategy, CompletionStreamOptions.defaults()
        .withMode(CompletionStreamOptions.Mode.BUSY_POLL).withIdleStrategy(idleStrategy).withFailOnError(false));
  }

  /**
   * The process-wide default, created on first use: {@link #DEFAULT_LOOP_COUNT} event-mode loops
   * named {@code rdma-loop-N}. Its idle threads end by themselves; disposing it is refused.
   */
  public static RdmaLoopResources shared() {
    RdmaLoopResources s = shared;
    if (s == null) {
      synchronized (RdmaLoopResources.class) {
        s = shared;
        if (s == null) {
          s = create("rdma-loop", DEFAULT_LOOP_COUNT);
          shared = s;
        }
      }
    }
    return s;
  }

  private static void checkCount(int loops) {
    if (loops < 1) {
      throw new IllegalArgumentException("loops must be >= 1, was " + loops);
    }
  }

  private static CompletionStreamOptions eventOptions() {
    return CompletionStreamOptions.defaults().withMode(CompletionStreamOptions.Mode.EVENT).withFailOnError(false);
  }

  /** How many loops (0 for thread-per-connection). */
  public int loopCount() {
    return loops.length;
  }

  /** Whether the loops busy-poll rather than sleep on their channels. */
  public boolean isBusyPoll() {
    return pollBudget == null;
  }

  CompletionStreamOptions completionOptions() {
    return streamOptions;
  }

  /** Where new endpoints of {@code provider} get their CQ's channel: round-robin over the loops; null for thread-per-connection. */
  @Nullable CompletionChannelSource channels(ConnectionProvider provider) {
    if (loops.length == 0) {
      return null;
    }
    return new CompletionChannelSource() {
      @Override
      public CompletionChannel acquire(String device) {
        if (disposed) {
          throw new IllegalStateException(RdmaLoopResources.this + " is disposed");
        }
        return loops[Math.floorMod(next.getAndIncrement(), loops.length)].acquire(provider, device);
      }

      @Override
      public void release(CompletionChannel channel) {
        for (Loop l : loops) {
          if (l.release(channel)) {
            return;
          }
        }
      }
    };
  }

  /**
   * Refuses new connections; each loop's channels close as their last connection goes (at once
   * for idle ones). The shared default cannot be disposed (its channels close when unused).
   */
  @Override
  public void dispose() {
    if (this != shared) {
      disposed = true;
    }
  }

  /** Disposes, then completes when every channel of these loops is closed (connections gone), within 30 s. */
  public Mono<Void> disposeLater() {
    return Mono.defer(() -> {
      dispose();
      return channelCount() == 0 ? Mono.<Void>empty() : Mono.error(new IllegalStateException(this
          + " still serves connections"));
    }).retryWhen(Retry.fixedDelay(3000, Duration.ofMillis(10)).onRetryExhaustedThrow((spec, sig) -> sig.failure()))
        .subscribeOn(Schedulers.boundedElastic());
  }

  /** Completion channels open now (one per loop and device in use). */
  public int channelCount() {
    int n = 0;
    for (Loop l : loops) {
      n += l.size();
    }
    return n;
  }

  @Override
  public boolean isDisposed() {
    return disposed;
  }

  @Override
  public String toString() {
    return "RdmaLoopResources[" + prefix + ", " + loops.length + " loops, "
        + (loops.length == 0 ? "thread per connection" : pollBudget == null ? "busy-poll" : "event, budget " + pollBudget)
        + "]";
  }

  /**
   * One loop: a channel per (provider, device), all served by one thread named after the loop,
   * counted by the endpoints using it and closed when the last gives it back.
   */
  private final class Loop {
    private final String name;
    private final Map<String, Entry> byKey = new HashMap<>();
    private final Map<CompletionChannel, Entry> byChannel = new IdentityHashMap<>();

    Loop(String name) {
      this.name = name;
    }

    synchronized CompletionChannel acquire(ConnectionProvider provider, String device) {
      String key = provider.getClass().getName() + "/" + device;
      Entry e = byKey.get(key);
      if (e == null) {
        CompletionChannel ch = provider.openCompletionChannel(device);
        // One thread per loop and device: a second device's thread gets the device in its name.
        CompletionStreams.configureLoop(ch, byKey.isEmpty() ? name : name + "-" + device, pollBudget, idleStrategy);
        e = new Entry(key, ch);
        byKey.put(key, e);
        byChannel.put(ch, e);
      }
      e.users++;
      return e.channel;
    }

    /** Whether {@code channel} was this loop's. */
    synchronized boolean release(CompletionChannel channel) {
      Entry e = byChannel.get(channel);
      if (e == null) {
        return false;
      }
      if (--e.users == 0) {
        byKey.remove(e.key);
        byChannel.remove(channel);
        CompletionStreams.forgetLoop(channel);
        try {
          channel.close(); // its last CQ is closed: nothing holds it
        } catch (RuntimeException ex) {
          log.warn("rdma-reactive: closing " + channel + " of " + name + " failed", ex);
        }
      }
      return true;
    }

    synchronized int size() {
      return byKey.size();
    }
  }

  private static final class Entry {
    final String key;
    final CompletionChannel channel;
    int users;

    Entry(String key, CompletionChannel channel) {
      this.key = key;
      this.channel = channel;
    }
  }
}
