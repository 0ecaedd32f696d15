package io.rdmareactive.spring.boot;

import io.rdmareactive.rdma.transport.RdmaClient;

/**
 * Adjusts each named client of {@link RdmaClients} after its {@code rdma.clients.<name>.*}
 * properties were applied. The client is immutable: return the configured copy.
 */
@FunctionalInterface
public interface RdmaClientCustomizer {
  /**
   * @param name the client's name, the key under {@code rdma.clients}
   */
  RdmaClient customize(String name, RdmaClient client);
}
