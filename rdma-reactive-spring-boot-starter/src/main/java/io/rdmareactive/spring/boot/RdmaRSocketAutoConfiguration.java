package io.rdmareactive.spring.boot;

import io.rdmareactive.rdma.spi.RdmaProvider;
import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaLoopResources;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaServer;
import io.rdmareactive.rdma.transport.RdmaTransport;
import io.rdmareactive.rdma.transport.TransportConfig;
import io.rdmareactive.rsocket.RdmaServerTransport;
import io.rdmareactive.rsocket.boot.RdmaRSocketServerFactory;
import io.rsocket.frame.decoder.PayloadDecoder;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.rsocket.autoconfigure.RSocketMessagingAutoConfiguration;
import org.springframework.boot.rsocket.autoconfigure.RSocketRequesterAutoConfiguration;
import org.springframework.boot.rsocket.autoconfigure.RSocketServerAutoConfiguration;
import org.springframework.boot.rsocket.context.RSocketServerBootstrap;
import org.springframework.boot.rsocket.server.RSocketServerCustomizer;
import org.springframework.boot.rsocket.server.RSocketServerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.io.buffer.NettyDataBufferFactory;
import org.springframework.messaging.rsocket.RSocketRequester;
import org.springframework.messaging.rsocket.annotation.support.RSocketMessageHandler;

/**
 * RSocket over RDMA through Boot's RSocket support. With {@code rdma.rsocket.server.enabled=true}
 * the application's {@code @MessageMapping} handlers ({@link RSocketMessageHandler}) are served by
 * an {@link RdmaRSocketServerFactory} (Boot's Netty factory backs off) on
 * {@code rdma.rsocket.server.port}, else {@code spring.rsocket.server.port}; Boot's
 * {@link RSocketServerCustomizer}s apply and {@code local.rsocket.server.port} is published as for
 * TCP. Without the property nothing changes: Boot's TCP or WebSocket server stays. Whenever Spring
 * RSocket is present, {@link RdmaRSocketRequesters} connects requesters over RDMA.
 */
@AutoConfiguration(after = {RdmaAutoConfiguration.class, RSocketMessagingAutoConfiguration.class,
    RSocketRequesterAutoConfiguration.class}, before = RSocketServerAutoConfiguration.class)
@ConditionalOnClass({RdmaServerTransport.class, RSocketServerFactory.class, RSocketRequester.class})
@EnableConfigurationProperties(RdmaRSocketProperties.class)
public class RdmaRSocketAutoConfiguration {
  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnBean({RdmaClients.class, RSocketRequester.Builder.class})
  RdmaRSocketRequesters rdmaRSocketRequesters(RdmaRSocketProperties rsocket, RdmaProperties properties,
      RdmaProvider provider, RdmaLoopResources loops, RdmaClients clients, Environment env,
      ObjectProvider<RSocketRequester.Builder> builders) {
    RdmaRSocketProperties.Client p = rsocket.getClient();
    RdmaClient client = framed(new RdmaOptionBinder(env, provider.name())
        .apply(RdmaClient.create().connectTimeout(p.getConnectTimeout()), "rdma.rsocket.client"), "rdma.rsocket.client")
        .runOn(loops);
    return new RdmaRSocketRequesters(client, p.getMaxPendingFrames(), p.getMaxPendingBytes().toBytes(), clients,
        builders::getObject,
        properties.getServer().getShutdownTimeout());
  }

  /**
   * {@code t}, checked for what RSocket adds to the options' own ranges: framing (not raw) and
   * messages that hold a frame's header.
   */
  static <T extends RdmaTransport<T>> T framed(T t, String prefix) {
    TransportConfig c = t.configuration();
    if (c.get(RdmaOption.RAW)) {
      throw new IllegalArgumentException(prefix + ".raw must be false (RSocket needs the framing)");
    }
    if (c.get(RdmaOption.MAX_MESSAGE_SIZE) < 64) {
      throw new IllegalArgumentException(prefix + ".max-message-size must be >= 64 (the largest RSocket frame), was "
          + c.get(RdmaOption.MAX_MESSAGE_SIZE));
    }
    return t;
  }

  /** Boot's RSocket server, over RDMA. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnBooleanProperty("rdma.rsocket.server.enabled")
  @ConditionalOnBean(RSocketMessageHandler.class)
  static class ServerConfiguration {
    private static final Log log = LogFactory.getLog(RdmaRSocketAutoConfiguration.class);

    @Bean
    @ConditionalOnMissingBean(RSocketServerFactory.class)
    RdmaRSocketServerFactory rdmaRSocketServerFactory(RdmaRSocketProperties rsocket, Environment env,
        RdmaProvider provider, RdmaLoopResources loops, ObjectProvider<RSocketServerCustomizer> customizers,
        ObjectProvider<RdmaConnectionObserver> observers) {
      RdmaRSocketProperties.Server p = rsocket.getServer();
      String host = p.getHost() != null ? p.getHost() : env.getProperty("spring.rsocket.server.address", "0.0.0.0");
      Integer port = p.getPort() != null ? p.getPort() : env.getProperty("spring.rsocket.server.port", Integer.class);
      if (port == null) {
        throw new IllegalStateException("rdma.rsocket.server.enabled=true needs a port: set rdma.rsocket.server.port "
            + "or spring.rsocket.server.port");
      }
      RdmaConnectionObserver observer = RdmaAutoConfiguration.observers(observers);
      RdmaServer server = framed(new RdmaOptionBinder(env, provider.name())
          .apply(RdmaServer.create().host(host).port(port), "rdma.rsocket.server"), "rdma.rsocket.server")
          .runOn(loops)
          .doOnConnection(c -> observer.connected("rsocket", c))
          .doOnDisconnected(c -> observer.disconnected("rsocket", c));
      RdmaRSocketServerFactory factory = new RdmaRSocketServerFactory(
          RdmaServerTransport.create(server,
              RdmaRSocketRequesters.frameLength(server.configuration().get(RdmaOption.MAX_MESSAGE_SIZE)))
              .maxPendingFrames(p.getMaxPendingFrames())
              .maxPendingBytes(p.getMaxPendingBytes().toBytes()));
      factory.setServerCustomizers(customizers.orderedStream().toList());
      factory.setLifecycleTimeout(p.getLifecycleTimeout());
      log.info("RSocket server over RDMA (" + provider.name() + ") on " + host + ":" + port);
      return factory;
    }

    /** Boot's own is registered only with spring.rsocket.server.port; this one needs no TCP port. */
    @Bean
    @ConditionalOnMissingBean
    RSocketServerBootstrap rdmaRSocketServerBootstrap(RSocketServerFactory factory, RSocketMessageHandler handler) {
      return new RSocketServerBootstrap(factory, handler.responder());
    }

    /**
     * As Boot's (registered only with spring.rsocket.server.port): when Spring's buffers are
     * Netty's, payloads are decoded without a copy, so a frame reaches the handler still in the
     * registered receive memory, released by Spring once decoded.
     */
    @Bean
    RSocketServerCustomizer rdmaRSocketPayloadDecoder(RSocketMessageHandler handler) {
      return server -> {
        if (handler.getRSocketStrategies().dataBufferFactory() instanceof NettyDataBufferFactory) {
          server.payloadDecoder(PayloadDecoder.ZERO_COPY);
        }
      };
    }
  }
}
