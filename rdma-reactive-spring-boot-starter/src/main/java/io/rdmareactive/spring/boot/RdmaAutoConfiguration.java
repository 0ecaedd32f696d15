package io.rdmareactive.spring.boot;

import io.rdmareactive.rdma.device.RdmaDevices;
import io.rdmareactive.rdma.spi.RdmaProvider;
import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaLoopResources;
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
import org.springframework.core.env.Environment;
import org.springframework.core.io.ResourceLoader;
import org.springframework.util.ClassUtils;

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

  /** The clients of {@code rdma.clients.<name>.*}: host, port, connect timeout, options ({@link RdmaOptionBinder}). */
  @Bean
  @ConditionalOnMissingBean
  RdmaClients rdmaClients(RdmaProperties properties, RdmaProvider provider, RdmaLoopResources loops, Environment env,
      ObjectProvider<RdmaClientCustomizer> customizers, ObjectProvider<RdmaConnectionObserver> observers) {
    RdmaOptionBinder options = new RdmaOptionBinder(env, provider.name());
    Map<String, RdmaProperties.Client> named = new LinkedHashMap<>(properties.getClients());
    options.names("rdma.clients").forEach(name -> named.putIfAbsent(name, new RdmaProperties.Client()));
    Map<String, RdmaClient> clients = new LinkedHashMap<>();
    named.forEach((name, p) -> {
      RdmaClient c = RdmaClient.create().host(p.getHost()).port(p.getPort()).connectTimeout(p.getConnectTimeout());
      clients.put(name, options.apply(c, "rdma.clients." + name).runOn(loops));
    });
    return new RdmaClients(clients, customizers.orderedStream().toList(), observers(observers),
        properties.getServer().getShutdownTimeout());
  }

  /**
   * {@code rdma.rsocket.server.enabled=true} without the modules that serve it fails the start,
   * naming what to add: otherwise {@link RdmaRSocketAutoConfiguration} would back off silently and
   * Boot's TCP RSocket server take the port.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnBooleanProperty("rdma.rsocket.server.enabled")
  static class RSocketServerRequirements {
    private static final Map<String, String> NEEDED = Map.of(
        "io.rdmareactive.rsocket.RdmaServerTransport", "io.rdmareactive:rdma-reactive-rsocket",
        "org.springframework.boot.rsocket.server.RSocketServerFactory",
        "org.springframework.boot:spring-boot-starter-rsocket");

    RSocketServerRequirements(ResourceLoader resources) {
      List<String> missing = NEEDED.entrySet().stream()
          .filter(e -> !ClassUtils.isPresent(e.getKey(), resources.getClassLoader()))
          .map(Map.Entry::getValue).sorted().toList();
      if (!missing.isEmpty()) {
        throw new IllegalStateException("rdma.rsocket.server.enabled=true needs " + String.join(" and ", missing)
            + " on the classpath");
      }
    }
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
        RdmaHandler handler, Environment env,
        ObjectProvider<RdmaServerCustomizer> customizers, ObjectProvider<RdmaConnectionObserver> observers) {
      RdmaProperties.Server p = properties.getServer();
      RdmaConnectionObserver observer = observers(observers);
      RdmaServer s = new RdmaOptionBinder(env, provider.name())
          .apply(RdmaServer.create().host(p.getHost()).port(p.getPort()), "rdma.server")
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
