package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.spi.ConnectionProvider;
import io.rdmareactive.rdma.spi.Endpoint;
import io.rdmareactive.rdma.spi.Listener;
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
public final class RdmaServer {
  private static final Logger log = Loggers.getLogger(RdmaServer.class);

  private final TransportConfig config;
  private final BiFunction<? super RdmaInbound, ? super RdmaOutbound, ? extends Publisher<Void>> handler;
  private final Consumer<? super RdmaConnection> onConnection;
  private final Consumer<? super RdmaConnection> onDisconnected;

  private RdmaServer(TransportConfig config,
      BiFunction<? super RdmaInbound, ? super RdmaOutbound, ? extends Publisher<Void>> handler,
      Consumer<? super RdmaConnection> onConnection, Consumer<? super RdmaConnection> onDisconnected) {
    this.config = config;
    this.handler = handler;
    this.onConnection = onConnection;
    this.onDisconnected = onDisconnected;
  }

  /** A server on all local addresses ({@code 0.0.0.0}), any free port, an idle handler. */
  public static RdmaServer create() {
    return new RdmaServer(TransportConfig.defaults("0.0.0.0"), (in, out) -> Mono.never(), c -> {}, c -> {});
  }

  public RdmaServer host(String host) {
    return new RdmaServer(config.withHost(Objects.requireNonNull(host, "host")), handler, onConnection,
        onDisconnected);
  }

  /** The port, 0 for any free one. */
  public RdmaServer port(int port) {
    return new RdmaServer(config.withPort(port), handler, onConnection, onDisconnected);
  }

  public <T> RdmaServer option(RdmaOption<T> option, T value) {
    return new RdmaServer(config.with(option, value), handler, onConnection, onDisconnected);
  }

  /**
   * Runs this server's connections on {@code loops} (default: {@link RdmaLoopResources#shared()}),
   * which also choose how completions are waited for (event, busy-poll, thread per connection).
   */
  public RdmaServer runOn(RdmaLoopResources loops) {
    return new RdmaServer(config.withLoops(Objects.requireNonNull(loops, "loops")), handler,
        onConnection, onDisconnected);
  }

  /** What each connection does; the connection is disposed when the returned publisher terminates. */
  public RdmaServer handle(
      BiFunction<? super RdmaInbound, ? super RdmaOutbound, ? extends Publisher<Void>> handler) {
    return new RdmaServer(config, Objects.requireNonNull(handler, "handler"), onConnection, onDisconnected);
  }

  /** Called with each established connection, before the handler; adds to hooks set before. */
  public RdmaServer doOnConnection(Consumer<? super RdmaConnection> onConnection) {
    return new RdmaServer(config, handler, TransportConfig.andThen(this.onConnection, onConnection), onDisconnected);
  }

  /** Called when a connection is closed and freed; adds to hooks set before. */
  public RdmaServer doOnDisconnected(Consumer<? super RdmaConnection> onDisconnected) {
    return new RdmaServer(config, handler, onConnection, TransportConfig.andThen(this.onDisconnected, onDisconnected));
  }

  /**
   * Resolves the host and listens, on subscription. Errors: ConnectionException UNRESOLVED (host)
   * or ADDRESS_IN_USE (port taken).
   */
  public Mono<DisposableRdmaServer> bind() {
    TransportConfig c = config;
    return Mono.fromCallable(() -> {
      InetSocketAddress address = Addresses.resolve(c.host(), c.port());
      ConnectionProvider provider = c.connectionProvider();
      Listener listener = provider.listen(address, c.endpointOptions(provider, ConnectionOperations.hello(c)));
      return (DisposableRdmaServer) new Bound(listener);
    }).subscribeOn(Schedulers.boundedElastic());
  }

  /** {@link #bind()}, waiting up to 30 seconds. Blocks. */
  public DisposableRdmaServer bindNow() {
    return bindNow(Duration.ofSeconds(30));
  }

  public DisposableRdmaServer bindNow(Duration timeout) {
    return Objects.requireNonNull(bind().block(timeout), "bind completed empty");
  }

  private final class Bound implements DisposableRdmaServer {
    private final Listener listener;
    private final Set<ConnectionOperations> connections = ConcurrentHashMap.newKeySet();
    private final Sinks.Empty<Void> listening = Sinks.empty();
    private final Disposable accepting;
    private final AtomicInteger pending = new AtomicInteger();
    /** Reassembly bytes of all this server's connections (MAX_SERVER_INBOUND_BYTES). */
    private final InboundBudget inbound = new InboundBudget(config.limits().maxServerInboundBytes());
    private final AtomicLong refused = new AtomicLong();
    private final Set<Protocol.Reject> refusalsLogged = ConcurrentHashMap.newKeySet();
    private volatile boolean disposed;

    Bound(Listener listener) {
      this.listener = listener;
      // Off the CM thread: registering buffers and the user's callbacks never hold up connection
      // setup for the whole process (rdma-cm serves every id).
      this.accepting = listener.incoming()
          // Handed out after a dispose cancelled this: the endpoint is ours to close all the same
          // (refusing it also tells its client), off the canceller's thread (the CM's, say).
          .doOnDiscard(Endpoint.class, e -> Schedulers.boundedElastic()
              .schedule(() -> refuse(e, Protocol.Reject.SHUTTING_DOWN)))
          .subscribeWith(new Acceptor());
    }

    /**
     * Takes one connect request at a time, each accepted on a task of its own. Not publishOn: a
     * dispose cancels publishOn's worker, and a request queued for it then is neither accepted
     * nor discarded, so its endpoint would leak. A task here always runs, and finds the server
     * disposed.
     */
    private final class Acceptor extends BaseSubscriber<Endpoint> {
      @Override
      protected void hookOnSubscribe(Subscription s) {
        s.request(1);
      }

      @Override
      protected void hookOnNext(Endpoint endpoint) {
        try {
          Schedulers.boundedElastic().schedule(() -> {
            try {
              accept(endpoint);
            } finally {
              request(1);
            }
          });
        } catch (RuntimeException rejected) { // the scheduler is shut down: the JVM is exiting
          refuse(endpoint, Protocol.Reject.SHUTTING_DOWN);
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

    private void accept(Endpoint endpoint) {
      Protocol.Hello peer = null;
      if (!config.raw()) {
        peer = Protocol.Hello.decode(endpoint.remotePrivateData());
        if (peer == null) {
          refuse(endpoint, Protocol.Reject.BAD_HELLO);
          return;
        }
      }
      TransportConfig.Limits limits = config.limits();
      if (disposed) {
        refuse(endpoint, Protocol.Reject.SHUTTING_DOWN);
        return;
      }
      if (connections.size() >= limits.maxConnections()) {
        refuse(endpoint, Protocol.Reject.TOO_MANY_CONNECTIONS);
        return;
      }
      if (pending.incrementAndGet() > limits.maxPendingHandshakes()) {
        pending.decrementAndGet();
        refuse(endpoint, Protocol.Reject.TOO_MANY_HANDSHAKES);
        return;
      }
      ConnectionOperations channel;
      try {
        channel = ConnectionOperations.open(endpoint, config, address(), inbound);
      } catch (RuntimeException e) {
        pending.decrementAndGet();
        log.error("rdma-reactive: could not set up a connection on " + address(), e);
        return;
      }
      connections.add(channel);
      channel.onDispose().subscribe(null, null, () -> {
        connections.remove(channel);
        onDisconnected.accept(channel);
      });
      if (disposed) { // dispose() ran between the check above and the add: it did not see this one
        pending.decrementAndGet();
        channel.abort(new ConnectionException(ConnectionException.Reason.RESET, "the server on " + address()
            + " is shutting down", null)).subscribe(null, x -> {});
        return;
      }
      Protocol.Hello hello = peer;
      Duration timeout = limits.handshakeTimeout();
      endpoint.establish()
          .timeout(timeout, Mono.error(() -> new ConnectionException(ConnectionException.Reason.TIMED_OUT,
              "the handshake with a client of " + address() + " took longer than " + timeout.toMillis() + " ms", null)))
          .publishOn(Schedulers.boundedElastic()) // off the CM thread: the handler is user code
          .doFinally(signal -> pending.decrementAndGet())
          .subscribe(null,
              e -> channel.abort(e).subscribe(null, x -> log.debug("rdma-reactive: accept failed", x)),
              () -> run(channel, hello));
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

    private void run(ConnectionOperations channel, Protocol.@org.jspecify.annotations.Nullable Hello peer) {
      channel.start(peer);
      try {
        onConnection.accept(channel);
        Disposable d = Mono.fromDirect(handler.apply(channel, channel)).subscribe(null, e -> {
          log.debug("rdma-reactive: the handler of " + channel + " failed", e);
          channel.dispose();
        }, channel::dispose);
        channel.onDispose().subscribe(null, null, d::dispose);
      } catch (RuntimeException e) {
        log.error("rdma-reactive: the handler of " + channel + " threw", e);
        channel.dispose();
      }
    }

    /** Rejects a connect request, telling the client why; logs the first refusal of each kind. */
    private void refuse(Endpoint endpoint, Protocol.Reject why) {
      refused.incrementAndGet();
      String msg = "rdma-reactive: refusing a connect request to " + address() + ": " + why.why;
      if (refusalsLogged.add(why)) {
        log.warn(msg + " (further refusals of this kind are logged at debug level)");
      } else {
        log.debug(msg);
      }
      try {
        endpoint.reject(why.encode());
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
