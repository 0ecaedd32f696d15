package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.spi.ConnectRequest;
import io.rdmareactive.rdma.spi.ConnectionProvider;
import io.rdmareactive.rdma.spi.Endpoint;
import io.rdmareactive.rdma.spi.ListenLimits;
import io.rdmareactive.rdma.spi.Listener;
import io.rdmareactive.rdma.spi.SinkHandoff;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * An RDMA messaging server, in Reactor Netty's shape: immutable, each method returns a configured
 * copy; {@link #bind()} listens.
 *
 * <pre>{@code
 * DisposableRdmaServer server = RdmaServer.create()
 *     .host("10.0.0.1").port(7471)
 *     .handle((in, out) -> out.send(in.receive()))   // echo
 *     .bindNow();
 * }</pre>
 *
 * Each accepted connection runs the handler; when the handler's publisher terminates the
 * connection is disposed.
 */
public final class RdmaServer extends RdmaTransport<RdmaServer> {
  private static final Logger log = Loggers.getLogger(RdmaServer.class);

  private final BiFunction<? super RdmaInbound, ? super RdmaOutbound, ? extends Publisher<Void>> handler;

  private RdmaServer(TransportConfig config,
      BiFunction<? super RdmaInbound, ? super RdmaOutbound, ? extends Publisher<Void>> handler) {
    super(config);
    this.handler = handler;
  }

  /** A server on all local addresses ({@code 0.0.0.0}), any free port, an idle handler. */
  public static RdmaServer create() {
    return new RdmaServer(TransportConfig.defaults("0.0.0.0"), (in, out) -> Mono.never());
  }

  @Override
  RdmaServer duplicate(TransportConfig config) {
    return new RdmaServer(config, handler);
  }

  /** What each connection does; the connection is disposed when the returned publisher terminates. */
  public RdmaServer handle(
      BiFunction<? super RdmaInbound, ? super RdmaOutbound, ? extends Publisher<Void>> handler) {
    return new RdmaServer(config, Objects.requireNonNull(handler, "handler"));
  }

  /** Called with each established connection, before the handler; adds to hooks set before. */
  public RdmaServer doOnConnection(Consumer<? super RdmaConnection> onConnection) {
    return duplicate(config.withOnConnected(onConnection));
  }

  /**
   * Resolves the host and listens, on subscription. Errors: ConnectionException UNRESOLVED (host)
   * or ADDRESS_IN_USE (port taken).
   */
  public Mono<DisposableRdmaServer> bind() {
    TransportConfig c = config;
    return Mono.create(sink -> {
      // A server bound after a cancel, or handed over just before one, is disposed.
      SinkHandoff<DisposableRdmaServer> handoff = SinkHandoff.on(sink, DisposableRdmaServer::dispose, () -> {});
      Schedulers.boundedElastic().schedule(() -> {
        if (handoff.isCancelled()) {
          return; // cancelled before it began: bind nothing
        }
        DisposableRdmaServer bound;
        try {
          InetSocketAddress address = Addresses.resolve(c.host(), c.port());
          ConnectionProvider provider = c.connectionProvider();
          Listener listener = provider.listen(address, c.endpointOptions(provider, c.hello()),
              new ListenLimits(c.get(RdmaOption.MAX_PENDING_HANDSHAKES), c.get(RdmaOption.HANDSHAKE_TIMEOUT),
                  Protocol.Reject.TOO_MANY_HANDSHAKES.encode()));
          bound = new Bound(listener);
        } catch (Throwable t) {
          sink.error(t);
          return;
        }
        handoff.deliver(bound);
      });
    });
  }

  /** {@link #bind()}, waiting up to 30 seconds. Blocks. */
  public DisposableRdmaServer bindNow() {
    return bindNow(Duration.ofSeconds(30));
  }

  /** {@link #bind()}, waiting up to {@code timeout}. Blocks. */
  public DisposableRdmaServer bindNow(Duration timeout) {
    return BlockingHandoff.await(bind(), timeout, "bindNow", DisposableRdmaServer::dispose);
  }

  private final class Bound implements DisposableRdmaServer {
    private final Listener listener;
    private final Set<ConnectionOperations> connections = ConcurrentHashMap.newKeySet();
    private final Sinks.Empty<Void> listening = Sinks.empty();
    private final Disposable accepting;
    private final AtomicInteger pending = new AtomicInteger();
    /** Reassembly bytes of all this server's connections (MAX_SERVER_INBOUND_BYTES). */
    private final InboundBudget inbound = new InboundBudget(config.get(RdmaOption.MAX_SERVER_INBOUND_BYTES));
    private final AtomicLong refused = new AtomicLong();
    private final Set<Protocol.Reject> refusalsLogged = ConcurrentHashMap.newKeySet();
    private volatile boolean disposed;

    Bound(Listener listener) {
      this.listener = listener;
      this.accepting = listener.incoming()
          // Handed out after a dispose cancelled this: the request is ours to refuse all the same.
          .doOnDiscard(ConnectRequest.class, r -> refuse(r, Protocol.Reject.SHUTTING_DOWN))
          .subscribeWith(new Acceptor());
    }

    /**
     * Takes every connect request as it comes and decides on the request itself, before anything
     * is built for it (cheap checks, fit for the CM thread that may deliver it); a request let in
     * is built and accepted on a task of its own, off the CM thread: registering buffers and the
     * user's callbacks never hold up connection setup for the whole process (rdma-cm serves every
     * id). Not publishOn: a dispose cancels publishOn's worker, and a request queued for it then
     * would be neither accepted nor discarded, and leak. A task here always runs, and finds the
     * server disposed.
     */
    private final class Acceptor extends BaseSubscriber<ConnectRequest> {
      @Override
      protected void hookOnSubscribe(Subscription s) {
        s.request(Long.MAX_VALUE); // MAX_PENDING_HANDSHAKES bounds what is let in, below
      }

      @Override
      protected void hookOnNext(ConnectRequest request) {
        if (!admit(request)) {
          return;
        }
        try {
          Schedulers.boundedElastic().schedule(() -> accept(request));
        } catch (RuntimeException rejected) { // the scheduler is shut down: the JVM is exiting
          pending.decrementAndGet();
          refuse(request, Protocol.Reject.SHUTTING_DOWN);
        }
      }

      @Override
      protected void hookOnError(Throwable e) {
        listenerFailed(e);
      }

      @Override
      protected void hookOnComplete() {
        listening.tryEmitEmpty();
      }
    }

    /**
     * Checks a connect request before anything is built for it: its hello, its retry counts (the
     * CM applies the initiator's to this side's QP, so a request for more than this server allows
     * would let the client hold this server's sends; framed peers only), and the limits. Refuses it, or counts it as
     * a pending handshake and returns true.
     */
    private boolean admit(ConnectRequest request) {
      if (!config.raw() && Protocol.Hello.decode(request.privateData()) == null) {
        int version = Protocol.versionOf(request.privateData());
        if (version > 0 && version != Protocol.VERSION) {
          refuse(request, Protocol.Reject.WRONG_VERSION, Protocol.versionMismatch(version));
        } else {
          refuse(request, Protocol.Reject.BAD_HELLO);
        }
        return false;
      }
      // Framed peers only: a raw server serves plain librdmacm programs, whose default connect
      // parameters ask for 7 and 7; it bounds its sends with KEEPALIVE_INTERVAL instead.
      if (!config.raw() && (request.retryCount() > config.get(RdmaOption.RETRY_COUNT)
          || request.rnrRetry() > config.get(RdmaOption.RNR_RETRY))) {
        refuse(request, Protocol.Reject.TOO_MANY_RETRIES);
        return false;
      }
      if (disposed) {
        refuse(request, Protocol.Reject.SHUTTING_DOWN);
        return false;
      }
      if (connections.size() >= config.get(RdmaOption.MAX_CONNECTIONS)) {
        refuse(request, Protocol.Reject.TOO_MANY_CONNECTIONS);
        return false;
      }
      if (pending.incrementAndGet() > config.get(RdmaOption.MAX_PENDING_HANDSHAKES)) {
        pending.decrementAndGet();
        refuse(request, Protocol.Reject.TOO_MANY_HANDSHAKES);
        return false;
      }
      return true;
    }

    /** Builds and accepts an admitted request, on a bounded-elastic task (blocking: verbs objects, buffers). */
    private void accept(ConnectRequest request) {
      if (disposed) {
        pending.decrementAndGet();
        refuse(request, Protocol.Reject.SHUTTING_DOWN);
        return;
      }
      Protocol.@org.jspecify.annotations.Nullable Hello peer = config.raw() ? null
          : Protocol.Hello.decode(request.privateData());
      Endpoint endpoint;
      try {
        endpoint = request.createEndpoint(); // rejects and frees the request when it fails
      } catch (RuntimeException e) {
        pending.decrementAndGet();
        log.error("rdma-reactive: could not build an endpoint for a connect request to " + address(), e);
        return;
      }
      ConnectionOperations connection;
      try {
        connection = ConnectionOperations.open(endpoint, config, address(), inbound);
      } catch (RuntimeException e) {
        pending.decrementAndGet();
        log.error("rdma-reactive: could not set up a connection on " + address(), e);
        return;
      }
      connections.add(connection);
      connection.onDispose().subscribe(null, null, () -> {
        connections.remove(connection);
        config.onDisconnected().accept(connection);
      });
      if (disposed) { // dispose() ran between the check above and the add: it did not see this one
        pending.decrementAndGet();
        connection.abort(new ConnectionException(ConnectionException.Reason.RESET, "the server on " + address()
            + " is shutting down", null)).subscribe(null, x -> {});
        return;
      }
      Protocol.Hello hello = peer;
      Duration timeout = config.get(RdmaOption.HANDSHAKE_TIMEOUT);
      endpoint.establish()
          .timeout(timeout, Mono.error(() -> new ConnectionException(ConnectionException.Reason.TIMED_OUT,
              "the handshake with a client of " + address() + " took longer than " + timeout.toMillis() + " ms", null)))
          .publishOn(Schedulers.boundedElastic()) // off the CM thread: the handler is user code
          .doFinally(signal -> pending.decrementAndGet())
          .subscribe(null,
              e -> connection.abort(e).subscribe(null, x -> log.debug("rdma-reactive: accept failed", x)),
              () -> run(connection, hello));
    }

    /**
     * The listener failed (its device was removed, say): this server accepts no more, frees the
     * listener (on boundedElastic, off the CM thread) and {@link #onDispose()} errors once its
     * connections, which see their own failures, are closed.
     */
    private void listenerFailed(Throwable e) {
      log.error("rdma-reactive: the listener on " + address() + " failed; this server accepts no more", e);
      disposed = true;
      try {
        listener.close();
      } catch (RuntimeException ex) {
        e.addSuppressed(ex);
      }
      listening.tryEmitError(e);
    }

    private void run(ConnectionOperations connection, Protocol.@org.jspecify.annotations.Nullable Hello peer) {
      connection.start(peer);
      try {
        config.onConnected().accept(connection);
        Disposable d = Mono.fromDirect(handler.apply(connection, connection)).subscribe(null, e -> {
          log.debug("rdma-reactive: the handler of " + connection + " failed", e);
          connection.dispose();
        }, connection::dispose);
        connection.onDispose().subscribe(null, null, d::dispose);
      } catch (RuntimeException e) {
        log.error("rdma-reactive: the handler of " + connection + " threw", e);
        connection.dispose();
      }
    }

    /** Rejects a connect request, telling the client why; logs the first refusal of each kind. */
    private void refuse(ConnectRequest request, Protocol.Reject why) {
      refuse(request, why, why.why);
    }

    /** As {@link #refuse(ConnectRequest, Protocol.Reject)}, logging {@code text} as the reason. */
    private void refuse(ConnectRequest request, Protocol.Reject why, String text) {
      refused.incrementAndGet();
      String msg = "rdma-reactive: refusing a connect request to " + address() + ": " + text;
      if (refusalsLogged.add(why)) {
        log.warn(msg + " (further refusals of this kind are logged at debug level)");
      } else {
        log.debug(msg);
      }
      try {
        request.reject(why.encode());
      } catch (RuntimeException e) {
        log.debug("rdma-reactive: rejecting failed", e);
      }
    }

    @Override
    public InetSocketAddress address() {
      return listener.boundAddress();
    }

    @Override
    public void dispose() {
      disposed = true;
      accepting.dispose();
      listener.close();
      listening.tryEmitEmpty();
      for (ConnectionOperations c : connections) {
        c.dispose();
      }
    }

    @Override
    public boolean isDisposed() {
      return disposed;
    }

    @Override
    public Mono<Void> onDispose() {
      Mono<Void> connectionsClosed = Mono.defer(() -> {
        List<Mono<Void>> all = connections.stream().map(ConnectionOperations::onDispose).toList();
        return Flux.merge(all).then();
      });
      return listening.asMono().onErrorResume(e -> connectionsClosed.then(Mono.error(e))).then(connectionsClosed);
    }
  }
}
