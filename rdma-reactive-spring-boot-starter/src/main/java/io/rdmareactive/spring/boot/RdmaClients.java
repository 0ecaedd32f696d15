package io.rdmareactive.spring.boot;

import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaConnection;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.beans.factory.DisposableBean;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The clients configured under {@code rdma.clients.<name>}, each with its properties and every
 * {@link RdmaClientCustomizer} applied. Connections they made and that are still open when the
 * context closes are closed then.
 *
 * <pre>{@code
 * clients.connect("pricing").flatMapMany(c -> c.inbound().receiveString())...
 * }</pre>
 */
public class RdmaClients implements DisposableBean {
  private final Map<String, RdmaClient> clients;
  private final Set<RdmaConnection> open = ConcurrentHashMap.newKeySet();
  private final Duration closeTimeout;

  /**
   * @param clients clients by name, used as given (connections made through them are not tracked)
   */
  public RdmaClients(Map<String, RdmaClient> clients) {
    this.clients = Map.copyOf(clients);
    this.closeTimeout = Duration.ofSeconds(10);
  }

  /**
   * Tracks the connections of each client, tells {@code observer} of them, then applies the
   * customizers (in order).
   */
  RdmaClients(Map<String, RdmaClient> clients, List<RdmaClientCustomizer> customizers,
      RdmaConnectionObserver observer, Duration closeTimeout) {
    Map<String, RdmaClient> all = new LinkedHashMap<>();
    clients.forEach((name, base) -> {
      RdmaClient c = base.doOnConnected(conn -> {
        open.add(conn);
        observer.connected(name, conn);
      }).doOnDisconnected(conn -> {
        open.remove(conn);
        observer.disconnected(name, conn);
      });
      for (RdmaClientCustomizer customizer : customizers) {
        c = customizer.customize(name, c);
      }
      all.put(name, c);
    });
    this.clients = Collections.unmodifiableMap(all);
    this.closeTimeout = closeTimeout;
  }

  /**
   * The client named {@code name}.
   *
   * @throws IllegalArgumentException when no {@code rdma.clients.<name>} is configured
   */
  public RdmaClient get(String name) {
    RdmaClient c = clients.get(name);
    if (c == null) {
      throw new IllegalArgumentException("no RDMA client '" + name + "' configured (rdma.clients." + name
          + ".host/port); configured: " + new TreeSet<>(clients.keySet()));
    }
    return c;
  }

  /** {@code get(name).connect()}: connects on subscription. */
  public Mono<RdmaConnection> connect(String name) {
    return Mono.defer(() -> get(name).connect());
  }

  /** The configured names. */
  public Set<String> names() {
    return clients.keySet();
  }

  /** Connections made by these clients and not yet closed. */
  public int openConnections() {
    return open.size();
  }

  @Override
  public void destroy() {
    closeAll(open, closeTimeout);
  }

  /** Closes the connections still {@code open}, waiting up to {@code timeout} for them to be freed. */
  static void closeAll(Set<RdmaConnection> open, Duration timeout) {
    if (open.isEmpty()) {
      return;
    }
    Flux.fromIterable(Set.copyOf(open)).flatMap(c -> {
      c.dispose();
      return c.onDispose();
    }).then().block(timeout);
  }

  /** How long closing waits for the open connections ({@code rdma.server.shutdown-timeout}). */
  Duration closeTimeout() {
    return closeTimeout;
  }
}
