package io.rdmareactive.rdma.transport;

import java.net.InetSocketAddress;
import java.time.Duration;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/** A bound {@link RdmaServer}: listening until disposed. */
public interface DisposableRdmaServer extends Disposable {
  /** The address listened on, with the actual port when port 0 was asked for. */
  InetSocketAddress address();

  /** The port listened on (the actual one when port 0 was asked for). */
  default int port() {
    return address().getPort();
  }

  /** Stops listening and disposes every connection (gracefully, see {@link RdmaConnection#dispose()}). */
  @Override
  void dispose();

  /**
   * Completes once the listener and every connection are closed and freed; errors instead (after
   * the same) when the listener failed, for instance because its RDMA device was removed.
   */
  Mono<Void> onDispose();

  /**
   * {@link #dispose()}, then waits up to {@code timeout} for {@link #onDispose()}; a listener
   * failure, already reported there and logged, does not make it throw. Blocks.
   */
  default void disposeNow(Duration timeout) {
    dispose();
    onDispose().onErrorResume(e -> Mono.empty()).block(timeout);
  }

  /** {@link #disposeNow(Duration)} with 30 seconds. */
  default void disposeNow() {
    disposeNow(Duration.ofSeconds(30));
  }
}
