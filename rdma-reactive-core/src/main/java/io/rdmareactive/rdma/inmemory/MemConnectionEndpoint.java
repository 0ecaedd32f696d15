package io.rdmareactive.rdma.inmemory;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.spi.AbstractEndpoint;
import io.rdmareactive.rdma.spi.EndpointOptions;
import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.QueuePairConnectOptions;
import io.rdmareactive.rdma.verbs.QueuePairOptions;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * An endpoint on the in-memory fabric: its own context, PD, completion channel, one CQ and an RC
 * QP, created in INIT. Establishing pairs the initiator's QP with the acceptor's (both to RTS) and
 * hands each side the other's private data; disconnecting moves this side's QP to ERROR and tells
 * the peer, as RDMA_CM_EVENT_DISCONNECTED would.
 */
final class MemConnectionEndpoint extends AbstractEndpoint {
  private final InMemoryProvider.DeviceSpec device;
  private final AtomicBoolean establishing = new AtomicBoolean();
  private final AtomicBoolean disconnected = new AtomicBoolean();
  private final AtomicBoolean uncounted = new AtomicBoolean();
  /** Passive side: the request it answers; active side: its own once establishing. */
  private volatile @Nullable Request request;
  private volatile @Nullable MemConnectionEndpoint peer;
  /** Set by {@link #markPortError}: the fault this endpoint fails with. */
  private volatile @Nullable ConnectionException portError;

  private MemConnectionEndpoint(boolean activeSide, InMemoryProvider.DeviceSpec device, InetSocketAddress address,
      EndpointOptions options, byte[] remotePrivateData, @Nullable Request request, Parts parts) {
    super("in-memory " + (activeSide ? "active" : "passive") + " endpoint (" + address + ")", activeSide, address,
        options, remotePrivateData, parts);
    this.device = device;
    this.request = request;
    device.fabric().created("endpoint");
    device.fabric().endpoints.add(this);
  }

  private static MemConnectionEndpoint create(boolean activeSide, InMemoryProvider.DeviceSpec device,
      InetSocketAddress address, EndpointOptions options, byte[] remotePrivateData, @Nullable Request request) {
    Parts parts = createParts(new MemContext(device), device.name(), options, (pd, cq, srq) -> {
      MemQueuePair qp = (MemQueuePair) pd.createQueuePair(QueuePairOptions.reliable(cq, 1)
          .withDepth(options.sendQueueDepth(), options.receiveQueueDepth())
          .withMaxInlineData(options.maxInlineData()).withSharedReceiveQueue(srq)
          .withScatterGather(EndpointOptions.SEND_SCATTER_GATHER, 1));
      try {
        qp.toInit();
      } catch (RuntimeException e) {
        qp.close();
        throw e;
      }
      return qp;
    });
    try {
      return new MemConnectionEndpoint(activeSide, device, address, options, remotePrivateData, request, parts);
    } catch (RuntimeException | Error e) {
      parts.discard(options);
      throw e;
    }
  }

  static MemConnectionEndpoint active(InMemoryProvider.DeviceSpec device, InetSocketAddress address,
      EndpointOptions options) {
    return create(true, device, address, options, new byte[0], null);
  }

  static MemConnectionEndpoint passive(InMemoryProvider.DeviceSpec device, InetSocketAddress local,
      EndpointOptions options, Request request) {
    return create(false, device, local, options, request.privateData, request);
  }

  @Override
  public Mono<Void> establish() {
    return Mono.defer(() -> {
      ensureOpen();
      if (!establishing.compareAndSet(false, true)) {
        return Mono.error(new IllegalStateException(this + " was already established (or is being)"));
      }
      return activeSide ? connectActive() : accept();
    });
  }

  private Mono<Void> connectActive() {
    return Mono.create(sink -> {
      MemConnectionListener l = device.fabric().listeners.get(address.getPort());
      Request r = new Request(this, options.privateData(), sink);
      request = r;
      sink.onCancel(r::cancel);
      if (l == null || !l.offer(r)) {
        r.reject(new ConnectionException(ConnectionException.Reason.REFUSED,
            "connection refused: nobody listens on " + address, null));
      }
    });
  }

  private Mono<Void> accept() {
    return Mono.fromRunnable(() -> {
      Request r = request;
      if (r == null) {
        throw new IllegalStateException(this + " has no connect request to accept");
      }
      r.accept(this);
    });
  }

  /**
   * Called by the request with its lock held: both QPs to RTS, then the peers know each other. As
   * the kernel CM does, each QP takes the RNR retry count the other side sent (the initiator's in
   * its REQ, the acceptor's in its REP) and a min RNR timer of 0 (655.36 ms).
   */
  private static void pair(MemConnectionEndpoint active, MemConnectionEndpoint passive) {
    active.queuePair().connect(passive.queuePair().localAddress(cm(0)), cm(passive.options.rnrRetry()));
    passive.queuePair().connect(active.queuePair().localAddress(cm(0)), cm(active.options.rnrRetry()));
    active.remotePrivateData(passive.options.privateData());
    active.peer = passive;
    passive.peer = active;
  }

  /** The attributes the RDMA CM gives a connected QP: the defaults, {@code rnrRetry}, min RNR timer 0. */
  private static QueuePairConnectOptions cm(int rnrRetry) {
    QueuePairConnectOptions d = QueuePairConnectOptions.defaults();
    return new QueuePairConnectOptions(d.portNumber(), d.gidIndex(), d.pathMtu(), d.remoteAccess(), d.timeout(),
        d.retryCount(), rnrRetry, 0, d.maxReadAtomic(), d.localPacketSequenceNumber());
  }

  @Override
  public void disconnect() {
    if (!disconnected.compareAndSet(false, true)) {
      return;
    }
    Request r = request;
    if (r != null) {
      if (activeSide) {
        r.cancel(); // a pending request goes away with its initiator
      } else {
        r.reject(new ConnectionException(ConnectionException.Reason.REFUSED,
            "connection refused: the listener's side rejected it", null), rejectData());
      }
    }
    // The peer hears of it before our QP fails its sends, so it can tell "peer gone" from a fault.
    MemConnectionEndpoint p = peer;
    if (p != null) {
      p.peerDisconnected();
    }
    try {
      QueuePair qp = queuePair();
      if (!qp.isClosed()) {
        qp.toError();
      }
    } catch (RuntimeException ignored) {
      // closed concurrently: nothing left to flush
    }
    onDisconnect.tryEmitEmpty();
  }

  /**
   * Marks this endpoint as failed by IBV_EVENT_PORT_ERR of {@code deviceName}'s port 1, if it is on
   * that device and open. {@link InMemoryProvider#portDown} marks every endpoint first and then
   * {@link #raisePortError()}s them: a peer told of a disconnect meanwhile fails with the event too.
   */
  boolean markPortError(String deviceName) {
    if (!device.name().equals(deviceName) || isClosed()) {
      return false;
    }
    portError = new ConnectionException(ConnectionException.Reason.RESET,
        this + ": IBV_EVENT_PORT_ERR on " + deviceName + " port 1", null);
    return true;
  }

  /** Fails the connection with the event {@link #markPortError} recorded (a pending connect too). */
  void raisePortError() {
    ConnectionException e = portError;
    if (e == null) {
      return;
    }
    Request r = request;
    if (activeSide && r != null) {
      r.reject(e); // a connect still pending fails with it (nothing, once it was answered)
    }
    onDisconnect.tryEmitError(e);
  }

  /** The port error this endpoint was marked with, if any: its failed work requests are that fault. */
  @Override
  public @Nullable ConnectionException faultBehind(@Nullable Throwable failure) {
    return portError;
  }

  /** The peer disconnected: this side hears of it, or of the port error it was marked with. */
  private void peerDisconnected() {
    ConnectionException e = portError;
    if (e != null) {
      onDisconnect.tryEmitError(e);
    } else {
      onDisconnect.tryEmitEmpty(); // its QP stays as it is until it disconnects too
    }
  }

  @Override
  protected void releaseConnection() {
    device.fabric().endpoints.remove(this);
    if (!uncounted.getAndSet(true)) { // no CM id here: only the count, once even when close is retried
      device.fabric().released("endpoint");
    }
  }

  /** A connect request in flight from an initiator to a listener. */
  static final class Request {
    final MemConnectionEndpoint initiator;
    final byte[] privateData;
    private final MonoSink<Void> sink;
    private boolean done; // guarded by this

    Request(MemConnectionEndpoint initiator, byte[] privateData, MonoSink<Void> sink) {
      this.initiator = initiator;
      this.privateData = privateData;
      this.sink = sink;
    }

    /** The initiator's transport and RNR retry counts, as a CM request carries them. */
    int retryCount() {
      return initiator.options.retryCount();
    }

    int rnrRetry() {
      return initiator.options.rnrRetry();
    }

    synchronized boolean isPending() {
      return !done;
    }

    void cancel() {
      synchronized (this) {
        done = true;
      }
    }

    void reject(ConnectionException e) {
      reject(e, new byte[0]);
    }

    /** Refuses a request still pending, handing the initiator {@code privateData} as the reject's. */
    void reject(ConnectionException e, byte[] privateData) {
      synchronized (this) {
        if (done) {
          return;
        }
        done = true;
      }
      initiator.remotePrivateData(privateData);
      sink.error(e);
    }

    void accept(MemConnectionEndpoint acceptor) {
      synchronized (this) {
        if (done || initiator.isClosed() || initiator.disconnected.get()) {
          done = true;
          throw new ConnectionException(ConnectionException.Reason.RESET,
              "the initiator of this connect request gave up before it was accepted", null);
        }
        done = true;
        pair(initiator, acceptor);
      }
      sink.success();
    }
  }
}
