package io.rdmareactive.spring.boot;

import io.rdmareactive.rdma.RdmaDevices;
import io.rdmareactive.rdma.spi.RdmaProvider;
import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaLoopResources;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaServer;
import io.rdmareactive.rdma.verbs.CompletionStreamOptions;
import io.rdmareactive.rdma.verbs.IdleStrategy;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * rdma-reactive's auto-configuration: the {@link RdmaProvider} that {@code rdma.provider}
 * selects, the named {@link RdmaClients}, and, when an {@link RdmaHandler} bean exists and
 * {@code rdma.server.enabled} is not false, an {@link RdmaServer} bound and disposed with the
 * context ({@link RdmaServerLifecycle}). Each bean backs off when the application defines one.
 */
@AutoConfiguration
@ConditionalOnClass(RdmaServer.class)
@EnableConfigurationProperties(RdmaProperties.class)
public class RdmaAutoConfiguration {
  /** The observers of every connection, as one. */
  static RdmaConnectionObserver observers(ObjectProvider<RdmaConnectionObserver> provider) {
    List<RdmaConnectionObserver> all = provider.orderedStream().toList();
    return new RdmaConnectionObserver() {
      @Override
      public void connected(String endpoint, RdmaConnection connection) {
        for (RdmaConnectionObserver o : all) {
          o.connected(endpoint, connection);
        }
      }

      @Override
      public void disconnected(String endpoint, RdmaConnection connection) {
        for (RdmaConnectionObserver o : all) {
          o.disconnected(endpoint, connection);
        }
      }
    };
  }

  /**
   * The loops every connection of the server and the clients runs on ({@code rdma.loops},
   * {@code rdma.completion-mode}, {@code rdma.poll-budget}), disposed with the context.
   */
  @Bean(destroyMethod = "dispose")
  @ConditionalOnMissingBean
  RdmaLoopResources rdmaLoopResources(RdmaProperties properties) {
    return properties.getCompletionMode() == CompletionStreamOptions.Mode.BUSY_POLL
        ? RdmaLoopResources.busyPoll("rdma-loop", properties.getLoops(), IdleStrategy.backoff())
        : RdmaLoopResources.create("rdma-loop", properties.getLoops(), properties.getPollBudget());
  }

  /** The provider {@code rdma.provider} names (auto is resolved here, once, and logged by core). */
  @Bean
  @ConditionalOnMissingBean
  RdmaProvider rdmaProvider(RdmaProperties properties) {
    return RdmaDevices.provider(properties.getProvider().selection());
  }

  @Bean
  @ConditionalOnMissingBean
  RdmaClients rdmaClients(RdmaProperties properties, RdmaProvider provider, RdmaLoopResources loops,
      ObjectProvider<RdmaClientCustomizer> customizers, ObjectProvider<RdmaConnectionObserver> observers) {
    Map<String, RdmaClient> clients = new LinkedHashMap<>();
    properties.getClients().forEach((name, p) -> {
      RdmaClient c = RdmaClient.create().host(p.getHost()).port(p.getPort()).connectTimeout(p.getConnectTimeout());
      clients.put(name, transport(c, p, provider).runOn(loops));
    });
    return new RdmaClients(clients, customizers.orderedStream().toList(), observers(observers),
        properties.getServer().getShutdownTimeout());
  }

  static RdmaClient transport(RdmaClient c, RdmaProperties.Transport p, RdmaProvider provider) {
    return c.option(RdmaOption.PROVIDER, provider.name())
        .option(RdmaOption.BUFFER_SIZE, p.getBufferSize())
        .option(RdmaOption.BUFFER_COUNT, p.getBufferCount())
        .option(RdmaOption.MAX_MESSAGE_SIZE, p.getMaxMessageSize())
        .option(RdmaOption.MAX_INBOUND_BYTES, p.getMaxInboundBytes())
        .option(RdmaOption.INLINE_THRESHOLD, p.getInlineThreshold())
        .option(RdmaOption.RAW, p.isRaw())
        .option(RdmaOption.CLOSE_TIMEOUT, p.getCloseTimeout())
        .option(RdmaOption.RETRY_COUNT, p.getRetryCount())
        .option(RdmaOption.RNR_RETRY, p.getRnrRetry())
        .option(RdmaOption.KEEPALIVE_INTERVAL, p.getKeepaliveInterval());
  }

  /** The server, when a handler exists. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnBean(RdmaHandler.class)
  @ConditionalOnBooleanProperty(name = "rdma.server.enabled", matchIfMissing = true)
  static class ServerConfiguration {
    /** The server: properties, connection observers, handler, then customizers (in order). */
    @Bean
    @ConditionalOnMissingBean
    RdmaServer rdmaServer(RdmaProperties properties, RdmaProvider provider, RdmaLoopResources loops,
        RdmaHandler handler,
        ObjectProvider<RdmaServerCustomizer> customizers, ObjectProvider<RdmaConnectionObserver> observers) {
      RdmaProperties.Server p = properties.getServer();
      RdmaConnectionObserver observer = observers(observers);
      RdmaServer s = RdmaServer.create().host(p.getHost()).port(p.getPort())
          .option(RdmaOption.PROVIDER, provider.name())
          .option(RdmaOption.BUFFER_SIZE, p.getBufferSize())
          .option(RdmaOption.BUFFER_COUNT, p.getBufferCount())
          .option(RdmaOption.MAX_MESSAGE_SIZE, p.getMaxMessageSize())
          .option(RdmaOption.MAX_INBOUND_BYTES, p.getMaxInboundBytes())
          .option(RdmaOption.MAX_SERVER_INBOUND_BYTES, p.getMaxServerInboundBytes())
          .option(RdmaOption.INLINE_THRESHOLD, p.getInlineThreshold())
          .option(RdmaOption.RAW, p.isRaw())
          .option(RdmaOption.CLOSE_TIMEOUT, p.getCloseTimeout())
          .option(RdmaOption.RETRY_COUNT, p.getRetryCount())
          .option(RdmaOption.RNR_RETRY, p.getRnrRetry())
          .option(RdmaOption.KEEPALIVE_INTERVAL, p.getKeepaliveInterval())
          .option(RdmaOption.MAX_CONNECTIONS, p.getMaxConnections())
          .option(RdmaOption.MAX_PENDING_HANDSHAKES, p.getMaxPendingHandshakes())
          .option(RdmaOption.HANDSHAKE_TIMEOUT, p.getHandshakeTimeout())
          .runOn(loops)
          .doOnConnection(c -> observer.connected("server", c))
          .doOnDisconnected(c -> observer.disconnected("server", c))
          .handle(handler);
      for (RdmaServerCustomizer customizer : customizers.orderedStream().toList()) {
        s = customizer.customize(s);
      }
      return s;
    }

    @Bean
    @ConditionalOnMissingBean
    RdmaServerLifecycle rdmaServerLifecycle(RdmaServer server, RdmaProperties properties) {
      return new RdmaServerLifecycle(server, properties.getServer().getShutdownTimeout());
    }
  }
}
