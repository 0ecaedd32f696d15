package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.loop.CompletionEventLoop;
import io.rdmareactive.rdma.spi.CompletionChannelSource;
import io.rdmareactive.rdma.spi.ConnectionProvider;
import io.rdmareactive.rdma.spi.ProtectionDomainSource;
import io.rdmareactive.rdma.spi.RdmaProvider;
import io.rdmareactive.rdma.spi.SharedReceiveQueueSource;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.CompletionStreamOptions;
import io.rdmareactive.rdma.verbs.IdleStrategy;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The loops that serve connections' completions, shared by many connections: the part Reactor
 * Netty's {@code LoopResources} plays. Give them to servers and clients with
 * {@link RdmaServer#runOn} / {@link RdmaClient#runOn}; without, they run on {@link #shared()}.
 *
 * <p>A loop is one named thread ({@code <prefix>-<n>}, an internal {@code CompletionEventLoop})
 * with one completion channel per device, both created, owned and stopped here; the CQs of every
 * connection assigned to it attach to that channel, so the thread count is the loop count (per
 * device), whatever the number of connections. A connection holds its loop: the loop polls the
 * connection's CQ and hands the completions to it directly, and runs its drains and timers. Connections are assigned
 * round-robin when they are created, as Netty's event-loop groups do: a connection's cost is
 * its traffic, which is not known when it is assigned, so least-loaded would buy little. All
 * of a connection's completions are handled on its loop.
 *
 * <ul>
 *   <li>{@link #create(String, int)}: event mode. A loop polls the CQs with demand for a short
 *       budget after the last completion ({@link #DEFAULT_POLL_BUDGET}), then arms the channel and
 *       sleeps, so ping-pong under load pays no kernel wakeup per message and idle loops sleep.
 *       The budget adapts: when a completion wakes the loop soon after its spin gave up, the next
 *       spins last a quarter longer than that wait, up to 20 times the budget and at most 1 ms;
 *       each completion that comes later than that halves it back (a budget of 1 ms or more does
 *       not adapt). So round trips longer than the budget (large messages, slow handlers, an
 *       emulated machine) do not pay a wakeup each either.
 *   <li>{@link #busyPoll(String, int, IdleStrategy)}: a loop never sleeps while it serves a
 *       connection; it polls all its CQs in turn with the idle strategy between empty rounds.
 *   <li>{@link #threadPerConnection(IdleStrategy)}: a busy-polling loop of its own per connection
 *       ({@code rdma-poll-N}), made with the connection and stopped with it: the lowest latency
 *       for a few connections.
 * </ul>
 *
 * <p>The threads are Reactor {@code NonBlocking} threads: handlers and subscribers run there and
 * must not block (move blocking work off with {@code publishOn}). A loop's thread and channel for
 * a device start with its first connection there and stop with its last, so idle loops hold no
 * verbs objects and no threads.
 */
public final class RdmaLoopResources implements Disposable {
  /** Event mode's default poll budget before a loop sleeps. */
  public static final Duration DEFAULT_POLL_BUDGET = Duration.ofNanos(50_000);

  /** max(cores, 4) loops, as Reactor Netty's default. */
  public static final int DEFAULT_LOOP_COUNT = Math.max(Runtime.getRuntime().availableProcessors(), 4);

  private static final AtomicInteger POLL_THREADS = new AtomicInteger();
  private static final Logger log = Loggers.getLogger(RdmaLoopResources.class);
  private static volatile @Nullable RdmaLoopResources shared;

  private final String prefix;
  private final LoopChannels[] loops; // empty for thread-per-connection
  private final boolean perConnection;
  private final @Nullable Duration pollBudget; // null: busy-poll
  private final @Nullable IdleStrategy idleStrategy;
  private final CompletionStreamOptions streamOptions;
  private final AtomicInteger next = new AtomicInteger();
  /** Loop threads running now, stopping ones included: disposeLater waits for them. */
  private final Set<CompletionEventLoop> running = ConcurrentHashMap.newKeySet();
  /** Thread-per-connection: each connection's own loop, by its channel. */
  private final Map<CompletionChannel, CompletionEventLoop> ownLoops = new ConcurrentHashMap<>();
  private final LoopDomains domains;
  private final LoopReceiveQueues receiveQueues;
  private final LoopSendPools sendPools;
  private volatile boolean disposed;

  private RdmaLoopResources(String prefix, int loopCount, boolean perConnection, @Nullable Duration pollBudget,
      @Nullable IdleStrategy idleStrategy, CompletionStreamOptions streamOptions) {
    this.prefix = Objects.requireNonNull(prefix, "prefix");
    this.perConnection = perConnection;
    this.loops = new LoopChannels[loopCount];
    for (int i = 0; i < loopCount; i++) {
      loops[i] = new LoopChannels(prefix + "-" + (i + 1), this::start, RdmaLoopResources::closeChannel);
    }
    this.pollBudget = pollBudget;
    this.idleStrategy = idleStrategy;
    this.streamOptions = streamOptions;
    this.domains = new LoopDomains(prefix + " loop resources");
    this.receiveQueues = new LoopReceiveQueues(domains, this::timerOf);
    this.sendPools = new LoopSendPools(domains, this::timerOf,
        channel -> Arrays.stream(loops).mapToInt(l -> l.users(channel)).sum()); // whichever loop's
  }

  /** {@code loops} event-mode loops named {@code prefix-1..n}, with the default poll budget. */
  public static RdmaLoopResources create(String prefix, int loops) {
    return create(prefix, loops, DEFAULT_POLL_BUDGET);
  }

  /**
   * {@code loops} event-mode loops that poll for {@code pollBudget} after the last completion
   * before they sleep ({@link Duration#ZERO}: sleep at once, a kernel wakeup per completion); the
   * budget adapts as the class description says.
   */
  public static RdmaLoopResources create(String prefix, int loops, Duration pollBudget) {
    checkCount(loops);
    if (pollBudget.isNegative()) {
      throw new IllegalArgumentException("pollBudget must be >= 0, was " + pollBudget);
    }
    return new RdmaLoopResources(prefix, loops, false, pollBudget, null, eventOptions());
  }

  /** {@code loops} busy-polling loops, {@code idleStrategy} between empty rounds. */
  public static RdmaLoopResources busyPoll(String prefix, int loops, IdleStrategy idleStrategy) {
    checkCount(loops);
    return new RdmaLoopResources(prefix, loops, false, null, Objects.requireNonNull(idleStrategy, "idleStrategy"),
        eventOptions());
  }

  /**
   * A busy-polling loop per connection ({@code rdma-poll-N}), {@code idleStrategy} between empty
   * polls; it starts with its connection and stops when the connection is freed.
   */
  public static RdmaLoopResources threadPerConnection(IdleStrategy idleStrategy) {
    return new RdmaLoopResources("rdma-poll", 0, true, null, Objects.requireNonNull(idleStrategy, "idleStrategy"),
        CompletionStreamOptions.defaults().withMode(CompletionStreamOptions.Mode.BUSY_POLL)
            .withIdleStrategy(idleStrategy).withFailOnError(false));
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

  /** How many loops (0 for thread-per-connection, whose loops come and go with connections). */
  public int loopCount() {
    return loops.length;
  }

  /** Whether the loops busy-poll rather than sleep on their channels. */
  public boolean isBusyPoll() {
    return pollBudget == null;
  }

  /** Event mode: how long a loop polls after the last completion before it sleeps; null when busy-polling. */
  public @Nullable Duration pollBudget() {
    return pollBudget;
  }

  /** Whether each connection gets a loop of its own. */
  public boolean isThreadPerConnection() {
    return perConnection;
  }

  CompletionStreamOptions completionOptions() {
    return streamOptions;
  }

  /** Where new endpoints of {@code provider} get their CQ's channel, and with it their loop. */
  CompletionChannelSource channels(ConnectionProvider provider) {
    return new CompletionChannelSource() {
      @Override
      public CompletionChannel acquire(String device) {
        if (disposed) {
          throw new IllegalStateException(RdmaLoopResources.this + " is disposed");
        }
        if (perConnection) {
          return ownLoop(provider, device);
        }
        return loops[Math.floorMod(next.getAndIncrement(), loops.length)].acquire(provider, device);
      }

      @Override
      public void release(CompletionChannel channel) {
        CompletionEventLoop own = ownLoops.remove(channel);
        if (own != null) {
          own.shutdown();
          closeChannel(channel);
          return;
        }
        for (LoopChannels l : loops) {
          if (l.release(channel)) {
            return;
          }
        }
      }
    };
  }

  /** Where new endpoints of {@code provider} get their PD: one per device, shared by these resources' connections. */
  ProtectionDomainSource domains(ConnectionProvider provider) {
    return domains.source(provider);
  }

  /**
   * The protection domain that the connections of these resources on {@code deviceName} of
   * {@code provider} share: register memory on it to send from (it stays until these resources
   * are disposed, and the memory registered on it must be closed before). Connections use it
   * whether or not this was called.
   *
   * @throws UnsupportedOperationException when the provider's connections cannot share a PD
   * @throws IllegalStateException when these resources are disposed
   */
  public ProtectionDomain protectionDomain(RdmaProvider provider, String deviceName) {
    return domains.pin(provider.connections(), deviceName);
  }

  /**
   * Where new framed endpoints get a shared receive queue (one per loop, device and buffer size,
   * see {@link ReceivePool}); null for thread-per-connection loops, where it would be one per
   * connection anyway.
   */
  @Nullable SharedReceiveQueueSource receiveQueues(int bufferSize, int maxBuffers, int headroom) {
    return perConnection ? null : receiveQueues.source(bufferSize, maxBuffers, headroom);
  }

  LoopReceiveQueues receiveQueues() {
    return receiveQueues;
  }

  /**
   * The send pool, attached, of a connection on {@code ch} with {@code pd}: one per loop, device and
   * buffer size ({@code size}, at most {@code max}); null where the PD is not these resources', each
   * connection has a loop of its own, or it is one of its loop's first {@code privates} ({@link LoopSendPools}).
   */
  @Nullable SendPool sendPools(@Nullable CompletionChannel ch, ProtectionDomain pd, int size, int max, int privates) {
    return perConnection || ch == null ? null : sendPools.attach(ch, pd, size, max, privates);
  }

  /** Bytes of send buffers registered now by these resources' send pools, all loops and devices together. */
  public long registeredSendBytes() {
    return sendPools.registeredBytes();
  }

  /**
   * Bytes of receive buffers registered now by these resources' shared receive queues, all loops
   * and devices together (a connection's own {@code registeredBytes} leaves them out).
   */
  public long registeredReceiveBytes() {
    return receiveQueues.registeredBytes();
  }

  /** Receives posted to refill the shared receive queues alive now, since each was made. */
  public long receiveQueueRefills() {
    return receiveQueues.refills();
  }

  /**
   * Receives posted now on the shared receive queues alive, all together: their depth. Idle, about
   * one per connection plus each queue's headroom (a connection's other reserve grants are backed,
   * not posted); a streaming connection adds the grants it lent.
   */
  public long receiveQueueDepth() {
    return receiveQueues.posted();
  }

  /** Shared receive queues alive now (one per loop, device and buffer size in use). */
  public int sharedReceiveQueueCount() {
    return receiveQueues.size();
  }

  /** Protection domains allocated now (one per provider and device in use, or pinned). */
  public int protectionDomainCount() {
    return domains.size();
  }

  /** The loop that serves CQs on {@code channel}, a channel these loops handed out. */
  CompletionEventLoop loopOf(CompletionChannel channel) {
    CompletionEventLoop own = ownLoops.get(channel);
    if (own != null) {
      return own;
    }
    for (LoopChannels l : loops) {
      CompletionEventLoop loop = l.loopOf(channel);
      if (loop != null) {
        return loop;
      }
    }
    throw new IllegalStateException(channel + " is not a channel of " + this);
  }

  /** The timers of {@code channel}'s loop, for its pools' trims. */
  private LoopBufferPool.Timer timerOf(CompletionChannel channel) {
    return (task, delay) -> {
      try {
        return loopOf(channel).schedule(task, delay);
      } catch (IllegalStateException gone) { // the loop's last connection closed, and its pools with it
        return Disposables.disposed();
      }
    };
  }

  private CompletionChannel ownLoop(ConnectionProvider provider, String device) {
    CompletionChannel ch = provider.openCompletionChannel(device);
    CompletionEventLoop loop = start(prefix + "-" + POLL_THREADS.incrementAndGet(), ch);
    ownLoops.put(ch, loop);
    return ch;
  }

  private CompletionEventLoop start(String name, CompletionChannel channel) {
    CompletionEventLoop loop = CompletionEventLoop.owned(name, channel, pollBudget, idleStrategy);
    running.add(loop);
    loop.onStopped().subscribe(null, null, () -> running.remove(loop));
    return loop;
  }

  /** Closes a loop's channel as its last CQ goes, at once: on rxe its context keeps librdmacm's device PD alive. */
  private static void closeChannel(CompletionChannel channel) {
    try {
      channel.close();
    } catch (RuntimeException e) {
      log.warn("rdma-reactive: closing " + channel + " failed", e);
    }
  }

  /**
   * Refuses new connections; each loop stops, closing its channel, as its last connection goes
   * (at once for idle ones), and so does each protection domain. The shared default cannot be disposed (its loops stop when unused).
   */
  @Override
  public void dispose() {
    if (this != shared) {
      disposed = true;
      domains.dispose();
    }
  }

  /**
   * Disposes, then completes when every loop thread of these resources has stopped and closed
   * its channel (their connections gone); fails if some still serve connections after 30 s.
   */
  public Mono<Void> disposeLater() {
    return Mono.defer(() -> {
      dispose();
      List<Mono<Void>> stops = new ArrayList<>();
      for (CompletionEventLoop l : running) {
        stops.add(l.onStopped());
      }
      return Mono.when(stops);
    }).timeout(Duration.ofSeconds(30), Mono.error(() -> new IllegalStateException(this + " still serves connections")));
  }

  /** Completion channels open now (one per loop and device in use, or per connection). */
  public int channelCount() {
    return ownLoops.size() + Arrays.stream(loops).mapToInt(LoopChannels::size).sum();
  }

  /** Endpoints on these loops now, those being made or closed included (one leaves just after its connection's {@code onDispose}). */
  public int endpointCount() {
    return ownLoops.size() + Arrays.stream(loops).mapToInt(LoopChannels::users).sum();
  }

  @Override
  public boolean isDisposed() {
    return disposed;
  }

  @Override
  public String toString() {
    return "RdmaLoopResources[" + prefix + ", " + (perConnection ? "thread per connection"
        : loops.length + " loops, " + (pollBudget == null ? "busy-poll" : "event, budget " + pollBudget)) + "]";
  }
}
