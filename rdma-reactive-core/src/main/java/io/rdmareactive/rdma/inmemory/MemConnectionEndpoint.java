package io.rdmareactive.rdma.inmemory;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.internal.AbstractRdmaResource;
import io.rdmareactive.rdma.spi.CompletionChannelSource;
import io.rdmareactive.rdma.spi.Endpoint;
import io.rdmareactive.rdma.spi.EndpointOptions;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.QueuePairConnectOptions;
import io.rdmareactive.rdma.verbs.QueuePairOptions;
import io.rdmareactive.rdma.verbs.RdmaContext;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Sinks;

/**
 * An endpoint on the in-memory fabric: its own context, PD, completion channel, one CQ and an RC
 * QP, created in INIT. Establishing pairs the initiator's QP with the acceptor's (both to RTS) and
 * hands each side the other's private data; disconnecting moves this side's QP to ERROR and tells
 * the peer, as RDMA_CM_EVENT_DISCONNECTED would.
 */
final class MemConnectionEndpoint extends AbstractRdmaResource implements Endpoint {
  private final boolean activeSide;
  private final InetSocketAddress address;
  private final EndpointOptions options;
  private final InMemoryProvider.DeviceSpec device;
  private final RdmaContext context;
  private final ProtectionDomain pd;
  /** Null when the CQ is on a shared channel from the options' source. */
  private final @Nullable CompletionChannel channel;
  /** The options' source's channel that the CQ is on, given back after the CQ is closed. */
  private @Nullable CompletionChannel sharedChannel;
  private final CompletionQueue cq;
  private final QueuePair qp;
  private final AtomicBoolean establishing = new AtomicBoolean();
  private final AtomicBoolean disconnected = new AtomicBoolean();
  private final Sinks.Empty<Void> onDisconnect = Sinks.empty();
  private volatile byte[] remotePrivateData;
  /** What a reject sends the initiator. */
  private volatile byte[] rejectData = new byte[0];
  /** Passive side: the request it answers; active side: its own once establishing. */
  private volatile @Nullable Request request;
  private volatile @Nullable MemConnectionEndpoint peer;

  private MemConnectionEndpoint(boolean activeSide, InMemoryProvider.DeviceSpec device, InetSocketAddress address,
      EndpointOptions options, byte[] remotePrivateData, @Nullable Request request) {
    super("in-memory " + (activeSide ? "active" : "passive") + " endpoint (" + address + ")", null);
    this.activeSide = activeSide;
    this.address = address;
    this.options = options;
    this.device = device;
    this.remotePrivateData = remotePrivateData;
    this.request = request;
    RdmaContext ctx = null;
    ProtectionDomain p = null;
    CompletionChannel ch = null;
    CompletionQueue q = null;
    CompletionChannel sharedChannel = null;
    try {
      ctx = new MemContext(device);
      p = ctx.allocateProtectionDomain();
      CompletionChannelSource source = options.channels();
      if (source == null) {
        ch = ctx.createCompletionChannel();
      } else {
        sharedChannel = source.acquire(device.name());
      }
      q = ctx.createCompletionQueue(options.completionQueueDepth(), ch != null ? ch : sharedChannel);
      MemQueuePair created = (MemQueuePair) p.createQueuePair(QueuePairOptions.reliable(q, 1)
          .withDepth(options.sendQueueDepth(), options.receiveQueueDepth())
          .withMaxInlineData(options.maxInlineData()));
      created.toInit();
      this.qp = created;
    } catch (RuntimeException e) {
      closeQuietly(q);
      closeQuietly(ch);
      options.releaseChannel(sharedChannel);
      closeQuietly(p);
      closeQuietly(ctx);
      abandon();
      throw e;
    }
    this.context = ctx;
    this.pd = p;
    this.channel = ch;
    this.sharedChannel = sharedChannel;
    this.cq = q;
    device.fabric().created("endpoint");
  }

  static MemConnectionEndpoint active(InMemoryProvider.DeviceSpec device, InetSocketAddress address,
      EndpointOptions options) {
    return new MemConnectionEndpoint(true, device, address, options, new byte[0], null);
  }

  static MemConnectionEndpoint passive(InMemoryProvider.DeviceSpec device, InetSocketAddress local,
      EndpointOptions options, Request request) {
    return new MemConnectionEndpoint(false, device, local, options, request.privateData, request);
  }

  @Override
  public RdmaContext context() {
    return context;
  }

  @Override
  public ProtectionDomain protectionDomain() {
    return pd;
  }

  @Override
  public QueuePair queuePair() {
    return qp;
  }

  @Override
  public CompletionQueue completionQueue() {
    return cq;
  }

  @Override
  public byte[] remotePrivateData() {
    return remotePrivateData.clone();
  }

  @Override
  public void reject(byte[] privateData) {
    rejectData = privateData.clone();
    close();
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

  /** Called by the request with its lock held: both QPs to RTS, then the peers know each other. */
  private static void pair(MemConnectionEndpoint active, MemConnectionEndpoint passive) {
    QueuePairConnectOptions o = QueuePairConnectOptions.defaults();
    active.qp.connect(passive.qp.localAddress(o), o);
    passive.qp.connect(active.qp.localAddress(o), o);
    active.remotePrivateData = passive.options.privateData();
    active.peer = passive;
    passive.peer = active;
  }

  @Override
  public Mono<Void> onDisconnect() {
    return onDisconnect.asMono();
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
            "connection refused: the listener's side rejected it", null), rejectData);
      }
    }
    // The peer hears of it before our QP fails its sends, so it can tell "peer gone" from a fault.
    MemConnectionEndpoint p = peer;
    if (p != null) {
      p.onDisconnect.tryEmitEmpty(); // its QP stays as it is until it disconnects too
    }
    try {
      if (!qp.isClosed()) {
        qp.toError();
      }
    } catch (RuntimeException ignored) {
      // closed concurrently: nothing left to flush
    }
    onDisconnect.tryEmitEmpty();
  }

  @Override
  protected void release() {
    disconnect();
    // Children first; a failure (a CQ with a live stream) leaves this open, and a later close resumes here.
    qp.close();
    cq.close();
    if (channel != null) {
      channel.close();
    }
    CompletionChannel shared = sharedChannel;
    sharedChannel = null; // given back once, even when a later step fails and close is retried
    options.releaseChannel(shared);
    pd.close();
    context.close();
    device.fabric().released("endpoint");
  }


  @Override
  protected String closeFunction() {
    return "rdma_destroy_ep";
  }

  private static void closeQuietly(@Nullable AutoCloseable c) {
    if (c != null) {
      try {
        c.close();
      } catch (Exception ignored) {
        // best effort while unwinding a failed construction
      }
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
      initiator.remotePrivateData = privateData;
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
