package io.rdmareactive.rsocket;

import io.rdmareactive.rdma.transport.DisposableRdmaServer;
import io.rsocket.Closeable;
import java.net.InetSocketAddress;
import java.util.Objects;
import reactor.core.publisher.Mono;

/**
 * A started {@link RdmaServerTransport}: the RSocket server's handle, like rsocket-java's
 * {@code CloseableChannel}. Disposing it stops listening and closes every connection.
 */
public final class CloseableRdmaServer implements Closeable {
  private final DisposableRdmaServer server;

  CloseableRdmaServer(DisposableRdmaServer server) {
    this.server = Objects.requireNonNull(server, "server");
  }

  /** The address listened on, with the actual port when port 0 was asked for. */
  public InetSocketAddress address() {
    return server.address();
  }

  /** The port listened on (the actual one when port 0 was asked for). */
  public int port() {
    return server.port();
  }

  /** Completes once the listener and every connection are closed and freed. */
  @Override
  public Mono<Void> onClose() {
    return server.onDispose();
  }

  @Override
  public void dispose() {
    server.dispose();
  }

  @Override
  public boolean isDisposed() {
    return server.isDisposed();
  }

  @Override
  public String toString() {
    return "CloseableRdmaServer{" + address() + "}";
  }
}
