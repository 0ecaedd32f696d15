package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.spi.ConnectionProvider;
import io.rdmareactive.rdma.spi.Endpoint;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * An RDMA messaging client, in Reactor Netty's shape: immutable, each method returns a configured
 * copy; {@link #connect()} connects.
 *
 * <pre>{@code
 * RdmaConnection c = RdmaClient.create().host("10.0.0.1").port(7471).connectNow();
 * c.outbound().sendString(Mono.just("hello")).then(c.inbound().receiveString().next())...
 * }</pre>
 */
public final class RdmaClient extends RdmaTransport<RdmaClient> {
  private RdmaClient(TransportConfig config) {
    super(config);
  }

  /** A client for {@code localhost}; set the port. */
  public static RdmaClient create() {
    return new RdmaClient(TransportConfig.defaults("localhost"));
  }

  @Override
  RdmaClient duplicate(TransportConfig config) {
    return new RdmaClient(config);
  }

  /** Bounds resolving, routing and the handshake together (default 10 s); past it, TIMED_OUT. */
  public RdmaClient connectTimeout(Duration timeout) {
    return duplicate(config.withConnectTimeout(timeout));
  }

  /** Called with the connection once established; adds to hooks set before. */
  public RdmaClient doOnConnected(Consumer<? super RdmaConnection> onConnected) {
    return duplicate(config.withOnConnected(onConnected));
  }

  /**
   * Connects on subscription. Errors are ConnectionExceptions: UNRESOLVED, REFUSED (nobody
   * listens, or the peer is not an rdma-reactive server in the same mode), UNREACHABLE,
   * TIMED_OUT; whatever was created is freed before the error is signalled. Cancelling frees it too,
   * up to the moment the connection reaches the subscriber; once there it is the subscriber's to
   * dispose, and a later cancel (a {@code take} on a {@code flatMapMany} over it) leaves it open.
   * An operator that cancels as it takes the value ({@code next()}, {@code take(1)} of a Flux made
   * from this Mono) cannot be told from one that drops it, so the connection is freed then:
   * compose with {@code flatMap}, or subscribe to the Mono as it is.
   */
  public Mono<RdmaConnection> connect() {
    TransportConfig c = config;
    Duration timeout = c.connectTimeout();
    return Mono.defer(() -> {
      long deadline = System.nanoTime() + timeout.toNanos();
      return Mono.fromCallable(() -> Addresses.resolve(c.host(), c.port()))
          .subscribeOn(Schedulers.boundedElastic())
          .timeout(timeout, Mono.error(() -> timedOut(c, timeout, null))) // an address it drops holds nothing
          .flatMap(address -> {
            ConnectionProvider provider = c.connectionProvider();
            // The provider keeps the rest of the deadline (its contract): a timeout operator here
            // would drop, unclosed, an endpoint made as it fired.
            return provider.connect(address, c.endpointOptions(provider, c.hello()), remaining(deadline))
                .onErrorMap(e -> e instanceof ConnectionException ce && ce.reason() == ConnectionException.Reason.TIMED_OUT
                    ? timedOut(c, timeout, e) : e) // the whole connect's deadline, named as such
                .map(endpoint -> new Created(endpoint, address));
          })
          .doOnDiscard(Created.class, created -> created.endpoint().close()) // a net: between the two flatMaps
          .flatMap(created -> handshake(c, created.endpoint(), created.address(), remaining(deadline)));
    });
  }

  private static Duration remaining(long deadline) {
    return Duration.ofNanos(Math.max(1, deadline - System.nanoTime()));
  }

  private record Created(Endpoint endpoint, InetSocketAddress address) {}

  /**
   * Opens a connection on {@code endpoint}, a connect under way to {@code address}, and completes
   * with it once the endpoint is established and the peer's hello read, within {@code remaining}:
   * TIMED_OUT past it, REFUSED with the server's reason. Package-private so that a test can hand
   * in an endpoint of its own.
   */
  Mono<RdmaConnection> handshake(TransportConfig c, Endpoint endpoint, InetSocketAddress address,
      Duration remaining) {
    ConnectionOperations connection = ConnectionOperations.open(endpoint, c, address);
    AtomicBoolean delivered = new AtomicBoolean();
    return endpoint.establish()
        .timeout(remaining, Mono.error(() -> timedOut(c, c.connectTimeout(), null)))
        .onErrorMap(e -> refusal(e, endpoint, address))
        .publishOn(Schedulers.boundedElastic()) // off the CM thread: what follows is user code
        .then(Mono.fromCallable(() -> {
          Protocol.Hello peer = null;
          if (!c.raw()) {
            peer = Protocol.Hello.decode(endpoint.remotePrivateData());
            int version = Protocol.versionOf(endpoint.remotePrivateData());
            if (peer == null && version > 0 && version != Protocol.VERSION) {
              throw new ConnectionException(ConnectionException.Reason.REFUSED, "the peer at " + address
                  + " accepted, but " + Protocol.versionMismatch(version), null);
            }
            if (peer == null) {
              throw new ConnectionException(ConnectionException.Reason.REFUSED, "the peer at " + address
                  + " accepted without an rdma-reactive hello (a raw peer needs RdmaOption.RAW)", null);
            }
          }
          connection.start(peer);
          connection.onDispose().subscribe(null, null, () -> c.onDisconnected().accept(connection));
          c.onConnected().accept(connection);
          return (RdmaConnection) connection;
        }))
        .onErrorResume(e -> connection.abort(e))
        // A cancel before the connection got through to the subscriber (a timeout that dropped it
        // as it came) frees it; one after (a take on a flatMap over it) leaves it to its holder.
        .doOnCancel(() -> {
          if (!delivered.get()) {
            connection.abort(new CancellationException("connect cancelled")).subscribe(null, e -> {});
          }
        })
        .doAfterTerminate(() -> delivered.set(true));
  }

  /** A REFUSED with the server's reason, when its reject carried one. */
  private static Throwable refusal(Throwable e, Endpoint endpoint, InetSocketAddress address) {
    if (e instanceof ConnectionException ce && ce.reason() == ConnectionException.Reason.REFUSED) {
      byte[] data = endpoint.remotePrivateData();
      Protocol.Reject why = Protocol.Reject.decode(data);
      int version = Protocol.versionOf(data);
      if (why != null && version != Protocol.VERSION) { // its codes may mean something else there
        return new ConnectionException(ConnectionException.Reason.REFUSED, "the server at " + address
            + " refused the connection: " + Protocol.versionMismatch(version), e);
      }
      if (why == Protocol.Reject.WRONG_VERSION) { // a peer of this version refuses only another one
        return new ConnectionException(ConnectionException.Reason.REFUSED, "the server at " + address
            + " refused the connection: " + why.why + " (this side speaks v" + Protocol.VERSION + ")", e);
      }
      if (why != null) {
        return new ConnectionException(ConnectionException.Reason.REFUSED, "the server at " + address
            + " refused the connection: " + why.why, e);
      }
    }
    return e;
  }

  private static ConnectionException timedOut(TransportConfig c, Duration timeout, @Nullable Throwable cause) {
    return new ConnectionException(ConnectionException.Reason.TIMED_OUT, "connecting to " + c.host() + ":"
        + c.port() + " timed out after " + timeout.toMillis() + " ms", cause);
  }

  /** {@link #connect()}, waiting for it. Blocks. */
  public RdmaConnection connectNow() {
    return connectNow(config.connectTimeout().plusSeconds(5));
  }

  /** {@link #connect()}, waiting up to {@code timeout}. Blocks. */
  public RdmaConnection connectNow(Duration timeout) {
    return BlockingHandoff.await(connect(), timeout, "connectNow", RdmaConnection::dispose);
  }
}
