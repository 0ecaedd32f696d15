package io.rdmareactive.spring.boot;

import io.rdmareactive.rdma.transport.RdmaConnection;

/**
 * Told of every connection of the auto-configured server and clients (beans of this type are
 * collected); the metrics use it. Called on transport threads: must not block.
 */
public interface RdmaConnectionObserver {
  /**
   * @param endpoint {@code server}, or the client's name
   */
  default void connected(String endpoint, RdmaConnection connection) {}

  /** The connection is closed and freed; its statistics are final. */
  default void disconnected(String endpoint, RdmaConnection connection) {}
}
