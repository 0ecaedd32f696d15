package io.rdmareactive.spring.boot;

import io.rdmareactive.rdma.transport.RdmaServer;

/**
 * Adjusts the auto-configured {@link RdmaServer} after the {@code rdma.server.*} properties were
 * applied. The server is immutable: return the configured copy. Customizers run in
 * {@link org.springframework.core.annotation.Order} order.
 */
@FunctionalInterface
public interface RdmaServerCustomizer {
  RdmaServer customize(RdmaServer server);
}
