package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.ProtocolViolationException;
import io.rdmareactive.rdma.RdmaException;
import io.rdmareactive.rdma.loop.CompletionEventLoop;
import io.rdmareactive.rdma.spi.Endpoint;
import io.rdmareactive.rdma.verbs.SharedReceiveQueue;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * One connection's operations (Reactor Netty's ChannelOperations), which wires its parts
 * together: {@link RegisteredBuffers}, the
 * {@link InboundReceiver} and {@link OutboundSender} (flow control: see {@link CreditWindow}), the
 * {@link CompletionIntake} feeding the {@link CompletionRing}, and the {@link ConnectionCloser}. Their
 * state is touched only inside {@link #drain()}, which one thread at a time runs ({@link
 * ConnectionDrain}): completions, requests, releases, new
 * sends and dispose only enqueue and call it, so nothing locks or blocks. The connection holds its
 * loop (from its {@link RdmaLoopResources}): the loop polls its CQ and hands the completions to it,
 * runs its drain and its timers. The drain hands each completion to the {@link CompletionDispatcher}.
 * A failure in the drain, an Error or a user callback throwing, costs this connection only.
 *
 * <p>Messages larger than the peer's buffer go as fragments (MORE bit), reassembled into heap
 * memory; each fragment's buffer is reposted at once. Raw mode has neither header nor credits.
 *
 * <h2>Lifecycle</h2>
 * Dispose stops taking new items, waits for posted sends to complete (at most CLOSE_TIMEOUT),
 * then disconnects; a peer
 * disconnect or a failure disconnects at once. Disconnecting flushes every posted receive; once
 * all work requests have completed the loop stops polling the CQ and the MRs, the endpoint
 * (QP, CQ, channel, PD, context) and the buffers' arena are freed, then inbound terminates and
 * {@link #onDispose()} completes.
 */
final class ConnectionOperations implements RdmaConnection, RdmaInbound, RdmaOutbound {

  private static final Logger log = Loggers.getLogger(ConnectionOperations.class);

  private final Endpoint endpoint;
  private final TransportConfig config;
  private final InetSocketAddress address;
  private final boolean raw;
  private final int bufferSize;
  private final RegisteredBuffers buffers;
  private final CompletionEventLoop loop;

  // Inputs from any thread.
  private final CompletionRing ring;
  private volatile boolean disposeRequested;
  private volatile boolean peerDisconnected;
  private volatile @Nullable Throwable failure;

  // Drain state.
  private boolean started;
  private final Fragmenter fragmenter;
  private final CreditWindow window;

  private final ConnectionCounters counters;
  private final OutboundSender sender;
  private final SendDoorbell doorbell;
  private final InboundReceiver receiver;
  private final ConnectionCloser closer;
  private final ConnectionDrain drains;
  private final CompletionIntake intake;
  private final Keepalive keepalive;
  private final CompletionDispatcher dispatcher;

  /**
   * Registers the buffers on {@code endpoint}, posts the initial receives and starts its completion
   * stream. On failure everything, the endpoint included, is freed before the exception leaves.
   */
  static ConnectionOperations open(Endpoint endpoint, TransportConfig config, InetSocketAddress address) {
    return open(endpoint, config, address, InboundBudget.unshared());
  }

  /** As {@link #open(Endpoint, TransportConfig, InetSocketAddress)}, reassembly counted against {@code shared} too (a server's total). */
  static ConnectionOperations open(Endpoint endpoint, TransportConfig config, InetSocketAddress address,
      InboundBudget shared) {
    try {
      return new ConnectionOperations(endpoint, config, address, shared);
    } catch (RuntimeException | Error e) { // an Error too (out of memory): nothing else would free the endpoint
      try {
        endpoint.close();
      } catch (RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  private ConnectionOperations(Endpoint endpoint, TransportConfig config, InetSocketAddress address,
      InboundBudget shared) {
    this.endpoint = endpoint;
    this.config = config;
    this.address = address;
    this.raw = config.raw();
    this.bufferSize = config.bufferSize();
    int receiveCount = config.receiveBuffers();
    int sendCount = config.bufferCount();
    this.loop = config.loops().loopOf(java.util.Objects.requireNonNull(endpoint.completionQueue().channel(),
        "the endpoint's CQ has no channel from its loops"));
    this.window = new CreditWindow(config.bufferCount());
    this.fragmenter = new Fragmenter(bufferSize,
        raw ? Math.min(bufferSize, config.maxMessageSize()) : config.maxMessageSize());
    buffers = buffers(endpoint, config, receiveCount, sendCount);
    try { // from here on a failure, an Error too, frees the buffers before it leaves
      ring = new CompletionRing(receiveCount + config.sendQueueDepth()); // every entry is an outstanding work request
      // Messages in flight: at most one per send work request (inline sends free their buffer at post).
      counters = new ConnectionCounters(config.sendQueueDepth());
      receiver = new InboundReceiver(this, endpoint.queuePair(), config, buffers, window, counters, shared);
      doorbell = new SendDoorbell(endpoint.queuePair(), config.sendQueueDepth(), counters);
      sender = new OutboundSender(this, doorbell, config, buffers, window, fragmenter, counters);
      closer = new ConnectionCloser(this, endpoint, buffers, ring, sender, receiver, counters,
          config.get(RdmaOption.CLOSE_TIMEOUT));
      drains = new ConnectionDrain(this, loop, closer);
      intake = new CompletionIntake(this, ring, closer);
      keepalive = new Keepalive(this, config.get(RdmaOption.KEEPALIVE_INTERVAL));
      dispatcher = new CompletionDispatcher(this, endpoint, receiver, sender, doorbell, keepalive, counters, closer,
          bufferSize);
      doorbell.retireTo(dispatcher);
      // Before the connection is established, as rdma_server.c does: the peer may send at once.
      int initial = raw ? receiveCount : Protocol.RESERVE;
      for (int i = 0; i < initial; i++) {
        receiver.postReceive();
      }
      intake.register(loop, endpoint.completionQueue(), config.completionOptions().batch());
      endpoint.onDisconnect().subscribe(null, e -> {
        fail(e); // a fault, named by the provider: the connection fails with it
        peerDisconnected = true;
        drain();
      }, () -> {
        peerDisconnected = true;
        drain();
      });
    } catch (RuntimeException | Error e) {
      cancelCompletions();
      buffers.deregister();
      buffers.free();
      throw e;
    }
  }

  /**
   * The connection's buffers: its receives from the loop's pool where its QP is on the loop's SRQ,
   * its sends from the loop's pool where its PD is the loop's, unless it is one of the loop's
   * first {@link RdmaOption#LOOP_PRIVATE_CONNECTIONS}, which keep their own send buffers.
   */
  private RegisteredBuffers buffers(Endpoint endpoint, TransportConfig config, int receiveCount, int sendCount) {
    SharedReceiveQueue srq = endpoint.sharedReceiveQueue();
    ReceivePool pool = srq == null ? null : config.loops().receiveQueues().poolOf(srq);
    if (srq != null && pool == null) {
      throw new IllegalStateException(endpoint + " is on " + srq + ", which is not one of its loops' receive pools");
    }
    SendPool sends = config.loops().sendPools(endpoint.completionQueue().channel(), endpoint.protectionDomain(),
        config.bufferSize(), config.get(RdmaOption.LOOP_SEND_BUFFERS), config.get(RdmaOption.LOOP_PRIVATE_CONNECTIONS));
    return RegisteredBuffers.open(endpoint.protectionDomain(), receiveCount, sendCount, config.bufferSize(), pool, sends,
        () -> {
          if (!loop.execute(this::drain)) {
            drain();
          }
        });
  }

  /** The handshake is done: from here on data flows, sized for the peer ({@code null} in raw mode). */
  void start(Protocol.@Nullable Hello peer) {
    sender.intake.submitStart(peer);
    drain();
  }

  /** Abandons a connection that never got going: frees everything, then signals {@code error}. */
  <T> Mono<T> abort(Throwable error) {
    fail(error);
    drain();
    return onDispose().then(Mono.error(error));
  }

  // ---- RdmaConnection ----------------------------------------------------------------------

  @Override
  public RdmaInbound inbound() {
    return this;
  }

  @Override
  public RdmaOutbound outbound() {
    return this;
  }

  @Override
  public InetSocketAddress address() {
    return address;
  }

  /** The protection domain the connection's memory is registered on (its loops' for the device). */
  io.rdmareactive.rdma.verbs.ProtectionDomain protectionDomain() {
    return endpoint.protectionDomain();
  }

  /** Its outbound side: the inbound side hands it the rendezvous' READs and DONEs (drain state). */
  OutboundSender sender() {
    return sender;
  }

  /** Registrations its READ targets took so far (see {@link ReadTargetPool#registrations}). */
  long readTargetRegistrations() {
    return receiver.rendezvous().registrations();
  }

  /** This connection's counters (the engine's parts and its message views count into them). */
  ConnectionCounters counters() {
    return counters;
  }

  @Override
  public RdmaStatistics statistics() {
    drains.synchronize(); // the drain writes the counters as plain fields
    return counters.snapshot(window.credits(), buffers.registeredBytes());
  }

  @Override
  public void dispose() {
    disposeRequested = true;
    drain();
  }

  @Override
  public boolean isDisposed() {
    return disposeRequested || closer.isClosed();
  }

  @Override
  public Mono<Void> onDispose() {
    return closer.onDispose();
  }

  @Override
  public String toString() {
    return "RdmaConnection[" + address + (raw ? ", raw" : "") + (closer.isClosed() ? ", closed" : "") + "]";
  }

  // ---- for the parts ------------------------------------------------------------------------

  /** Whether {@link #dispose} was called (closing may not have begun). */
  boolean disposeRequested() {
    return disposeRequested;
  }

  /** Whether the handshake is done (drain state). */
  boolean started() {
    return started;
  }

  boolean peerDisconnected() {
    return peerDisconnected;
  }

  @Nullable Throwable failure() {
    return failure;
  }

  /** Runs {@code task} once after {@code delay} on this connection's loop (its timers: see ConnectionCloser). */
  Disposable schedule(Runnable task, Duration delay) {
    return loop.schedule(task, delay);
  }

  /** On the loop: polls the CQ now, as the loop would on its next event; false elsewhere. */
  boolean pollNow() {
    return intake.pollNow();
  }

  /** Any thread: a send source the drain let go of queued an item after all (see {@link SendSource}). */
  void handBack(SendSource s) {
    sender.intake.handBack(s);
  }

  void cancelCompletions() {
    if (intake != null) { // null only when the constructor failed before it was made
      intake.cancel();
    }
  }

  /** Records the connection's failure, the first one only; the drain acts on it. */
  void fail(Throwable t) {
    if (failure == null) {
      failure = t;
    }
  }

  // ---- inbound ------------------------------------------------------------------------------

  @Override
  public Flux<RdmaMessage> receive() {
    return receiver.receive();
  }

  // ---- outbound -----------------------------------------------------------------------------

  @Override
  public Mono<Void> send(Publisher<?> messages) {
    return sender.intake.send(messages);
  }

  // ---- the drain ----------------------------------------------------------------------------

  /** Runs the connection's work on its loop, one thread at a time (see {@link ConnectionDrain#drain}). */
  void drain() {
    drains.drain();
  }

  /** One pass of the connection's work: only {@link ConnectionDrain} runs it. */
  void drainOnce() {
    if (closer.closed()) {
      closer.discardInputs();
      receiver.emit(true);
      return;
    }
    SendSource s;
    while ((s = sender.intake.pollNew()) != null) {
      if (s.publisher == null) {
        startLocked(s.hello);
      } else if (closer.disconnected()) {
        s.fail(closer.sendError());
      } else {
        sender.enqueue(s);
      }
    }
    receiver.takeReleases();
    ring.drainTo(dispatcher);
    closer.disconnectIfDue();
    receiver.emit(closer.closed());
    if (!closer.disconnected() && !dispatcher.flushedBeforeStart()) { // reposted into a QP in ERROR they would only flush again
      receiver.postReceives();
      if (started) {
        if (!disposeRequested) {
          sender.pump();
        }
        sender.sendCredits();
        switch (keepalive.tick(sender.sendsOutstanding())) {
          case PROBE -> sender.postProbe();
          case STALLED -> {
            fail(keepalive.stalled());
            drain(); // once more: the failure disconnects
          }
          case NONE -> { }
        }
      }
    } else if (closer.disconnected()) {
      keepalive.stop();
    }
    if (closer.disconnected()) {
      doorbell.discard(); // queued before the disconnect: into a QP in ERROR it would only flush
    } else {
      doorbell.flush(); // one doorbell for what this pass made
    }
    closer.closeIfDue();
  }

  private void startLocked(Protocol.@Nullable Hello peer) {
    if (peer != null) {
      String violation = window.peerBuffers(peer.bufferCount());
      if (violation != null) {
        protocolError(violation); // grants that came before the hello said how many it may grant
      }
      fragmenter.limits(Math.min(bufferSize, peer.bufferSize()),
          Math.min(config.maxMessageSize(), peer.maxMessageSize()));
    }
    started = true;
    keepalive.start();
    if (dispatcher.flushedBeforeStart() && failure == null && !peerDisconnected) {
      failure = reset("the queue pair went to the error state", null);
    }
  }

  /**
   * Fails the connection for a peer breaking the protocol: counted, logged once (the first
   * violation fails the connection, so later ones are not news), and only this connection pays.
   */
  void protocolError(String what) {
    if (failure == null) {
      counters.creditViolation();
      ProtocolViolationException e = new ProtocolViolationException(address, what);
      log.warn("rdma-reactive: " + this + ": " + e.getMessage() + "; closing this connection");
      fail(e);
    }
  }

  static ConnectionException reset(String what, @Nullable Throwable cause) {
    return new ConnectionException(ConnectionException.Reason.RESET, "connection reset: " + what, cause);
  }
}
