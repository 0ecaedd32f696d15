package io.rdmareactive.rdma.transport;

import java.util.function.Consumer;

/**
 * What {@link RdmaServer} and {@link RdmaClient} have in common, written once, as Reactor Netty's
 * {@code Transport<T, C>}: where, which options, which loops, and the disconnect hook. Immutable:
 * each method returns a configured copy of the same kind.
 *
 * @param <T> the concrete kind, which each method returns
 */
public abstract sealed class RdmaTransport<T extends RdmaTransport<T>> permits RdmaServer, RdmaClient {
  final TransportConfig config;

  RdmaTransport(TransportConfig config) {
    this.config = config;
  }

  /** A copy of this server or client, with everything but its configuration kept. */
  abstract T duplicate(TransportConfig config);

  /** The settings this server or client would bind or connect with; read-only. */
  public final TransportConfig configuration() {
    return config;
  }

  /** The host to bind to (a server: an address of an RDMA device) or to connect to (a client). */
  public final T host(String host) {
    return duplicate(config.withHost(host));
  }

  /** The port to bind to (0: any free one) or to connect to. */
  public final T port(int port) {
    return duplicate(config.withPort(port));
  }

  /**
   * Sets {@code option} to {@code value}.
   *
   * @throws IllegalArgumentException when the option rejects the value, naming the option and its range
   */
  public final <V> T option(RdmaOption<V> option, V value) {
    return duplicate(config.with(option, value));
  }

  /**
   * Runs the connections on {@code loops} (default: {@link RdmaLoopResources#shared()}), which also
   * choose how completions are waited for (event, busy-poll, thread per connection).
   */
  public final T runOn(RdmaLoopResources loops) {
    return duplicate(config.withLoops(loops));
  }

  /** Called when a connection is closed and freed; adds to hooks set before. */
  public final T doOnDisconnected(Consumer<? super RdmaConnection> onDisconnected) {
    return duplicate(config.withOnDisconnected(onDisconnected));
  }
}
