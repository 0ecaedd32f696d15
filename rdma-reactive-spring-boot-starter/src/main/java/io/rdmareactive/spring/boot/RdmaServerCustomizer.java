package io.rdmareactive.spring.boot;

import io.rdmareactive.rdma.transport.RdmaServer;

/**
 * Adjusts the auto-configured {@link RdmaServer} after the {@code rdma.server.*} properties were
 * applied. The server is immutable: return the configured copy. Customizers run in
 * {@link org.springframework.core.annotation.Order} order.
 */
@FunctionalInterface
public interface RdmaServerCustomizer {
  /** Returns the builder to bind: {@code server} with changes (builders are immutable, so return what the changes gave). */
  RdmaServer customize(RdmaServer server);
}
