package io.rdmareactive.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rdmareactive.rdma.spi.RdmaProvider;
import io.rdmareactive.rdma.transport.RdmaLoopResources;
import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaServer;
import io.rdmareactive.rdma.verbs.CompletionStreamOptions;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The auto-configuration on the in-memory provider. */
class RdmaAutoConfigurationTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(RdmaAutoConfiguration.class,
          RdmaHealthContributorAutoConfiguration.class, RdmaMetricsAutoConfiguration.class));

  private final ApplicationContextRunner inMemory = runner.withPropertyValues("rdma.provider=in-memory");

  @Configuration(proxyBeanMethods = false)
  static class Echo {
    @Bean
    RdmaHandler echo() {
      return (in, out) -> out.send(in.receive());
    }
  }

  @Test
  void defaultsGiveProviderClientsMetricsAndHealthButNoServerWithoutHandler() {
    runner.run(ctx -> {
      assertThat(ctx).hasNotFailed();
      RdmaProperties p = ctx.getBean(RdmaProperties.class);
      assertThat(p.getProvider()).isEqualTo(RdmaProperties.Provider.AUTO);
      assertThat(p.getDevice()).isNull();
      assertThat(p.getCompletionMode()).isEqualTo(CompletionStreamOptions.Mode.AUTO);
      assertThat(p.getServer().isEnabled()).isTrue();
      assertThat(p.getServer().getHost()).isEqualTo("0.0.0.0");
      assertThat(p.getServer().getPort()).isEqualTo(7471);
      assertThat(p.getServer().getShutdownTimeout()).isEqualTo(Duration.ofSeconds(30));
      assertThat(p.getClients()).isEmpty();
      // On a host without an RDMA device auto resolves to in-memory; with one, to native.
      assertThat(ctx.getBean(RdmaProvider.class).name()).isIn("in-memory", "native");
      assertThat(ctx.getBean(RdmaClients.class).names()).isEmpty();
      assertThat(ctx).hasSingleBean(RdmaMetrics.class).hasSingleBean(RdmaHealthIndicator.class)
          .doesNotHaveBean(RdmaServer.class).doesNotHaveBean(RdmaServerLifecycle.class);
    });
  }

  @Test
  void propertiesAreBound() {
    // The options (rdma.server.buffer-size and the like) are covered by RdmaOptionPropertiesTest.
    inMemory.withPropertyValues("rdma.device=mem0", "rdma.completion-mode=busy-poll",
        "rdma.server.host=127.0.0.1", "rdma.server.port=0", "rdma.loops=3", "rdma.poll-budget=20us",
        "rdma.server.shutdown-timeout=5s", "rdma.clients.pricing.host=10.0.0.1", "rdma.clients.pricing.port=9000",
        "rdma.clients.pricing.connect-timeout=3s", "rdma.clients.pricing.buffer-count=8",
        "rdma.clients.audit.port=9001").run(ctx -> {
          RdmaProperties p = ctx.getBean(RdmaProperties.class);
          assertThat(p.getProvider()).isEqualTo(RdmaProperties.Provider.IN_MEMORY);
          assertThat(p.getDevice()).isEqualTo("mem0");
          assertThat(p.getCompletionMode()).isEqualTo(CompletionStreamOptions.Mode.BUSY_POLL);
          RdmaProperties.Server s = p.getServer();
          assertThat(s.getHost()).isEqualTo("127.0.0.1");
          assertThat(s.getPort()).isZero();
          assertThat(p.getLoops()).isEqualTo(3);
          assertThat(p.getPollBudget()).isEqualTo(Duration.ofNanos(20_000));
          RdmaLoopResources loops = ctx.getBean(RdmaLoopResources.class);
          assertThat(loops.loopCount()).isEqualTo(3);
          assertThat(loops.isBusyPoll()).isTrue();
          assertThat(s.getShutdownTimeout()).isEqualTo(Duration.ofSeconds(5));
          RdmaProperties.Client c = p.getClients().get("pricing");
          assertThat(c.getHost()).isEqualTo("10.0.0.1");
          assertThat(c.getPort()).isEqualTo(9000);
          assertThat(c.getConnectTimeout()).isEqualTo(Duration.ofSeconds(3));
          assertThat(p.getClients().get("audit").getHost()).isEqualTo("localhost");
          assertThat(ctx.getBean(RdmaProvider.class).name()).isEqualTo("in-memory");
          RdmaClients clients = ctx.getBean(RdmaClients.class);
          assertThat(clients.names()).containsExactlyInAnyOrder("pricing", "audit");
          assertThat(clients.get("pricing").configuration().get(RdmaOption.BUFFER_COUNT)).isEqualTo(8);
          assertThat(clients.get("audit").configuration().get(RdmaOption.BUFFER_COUNT))
              .isEqualTo(RdmaOption.BUFFER_COUNT.defaultValue());
          assertThatThrownBy(() -> clients.get("missing")).isInstanceOf(IllegalArgumentException.class)
              .hasMessageContaining("rdma.clients.missing").hasMessageContaining("[audit, pricing]");
        });
  }

  @Test
  void invalidPropertiesFailTheStartNamingTheProperty() {
    inMemory.withPropertyValues("rdma.server.port=-1").run(ctx -> assertThat(ctx).hasFailed()
        .getFailure().rootCause().hasMessageContaining("rdma.server.port must be 0 .. 65535, was -1"));
    inMemory.withPropertyValues("rdma.clients.pricing.port=0").run(ctx -> assertThat(ctx).hasFailed()
        .getFailure().rootCause().hasMessageContaining("rdma.clients.pricing.port must be 1 .. 65535, was 0"));
    // Options are checked by RdmaOption itself, all of one server or client at once.
    inMemory.withPropertyValues("rdma.clients.pricing.buffer-size=10").run(ctx -> assertThat(ctx).hasFailed()
        .getFailure().rootCause()
        .hasMessageContaining("rdma.clients.pricing.buffer-size: BUFFER_SIZE must be 64 .. 16 MiB, was 10"));
    inMemory.withPropertyValues("rdma.clients.x.connect-timeout=0s").run(ctx -> assertThat(ctx).hasFailed()
        .getFailure().rootCause().hasMessageContaining("rdma.clients.x.connect-timeout must be positive"));
    inMemory.withUserConfiguration(Echo.class)
        .withPropertyValues("rdma.server.buffer-count=0", "rdma.server.inline-threshold=4096")
        .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
            .hasMessageContaining("rdma.server.buffer-count: BUFFER_COUNT must be 1 .. 16384, was 0")
            .hasMessageContaining("rdma.server.inline-threshold: INLINE_THRESHOLD must be 0 .. 1024, was 4096"));
    inMemory.withPropertyValues("rdma.loops=0").run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
        .hasMessageContaining("rdma.loops must be >= 1, was 0"));
    inMemory.withUserConfiguration(Echo.class)
        .withPropertyValues("rdma.server.max-connections=0", "rdma.server.handshake-timeout=0s")
        .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
            .hasMessageContaining("rdma.server.max-connections: MAX_CONNECTIONS must be >= 1, was 0")
            .hasMessageContaining("rdma.server.handshake-timeout: HANDSHAKE_TIMEOUT must be positive"));
    inMemory.withUserConfiguration(Echo.class).withPropertyValues("rdma.server.close-timeout=0s",
        "rdma.server.retry-count=8").run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
            .hasMessageContaining("rdma.server.close-timeout: CLOSE_TIMEOUT must be positive, was PT0S")
            .hasMessageContaining("rdma.server.retry-count: RETRY_COUNT must be 0 .. 7, was 8"));
    inMemory.withPropertyValues("rdma.clients.x.rnr-retry=-1", "rdma.clients.x.keepalive-interval=5ms")
        .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
            .hasMessageContaining("rdma.clients.x.rnr-retry: RNR_RETRY must be 0 .. 7 (7: forever), was -1")
            .hasMessageContaining("rdma.clients.x.keepalive-interval: "
                + "KEEPALIVE_INTERVAL must be 0 (off) or 10 ms .. 1 day, was PT0.005S"));
    // Not a number: Boot's conversion failure names the property.
    inMemory.withPropertyValues("rdma.clients.x.buffer-count=many").run(ctx -> assertThat(ctx).hasFailed()
        .getFailure().hasStackTraceContaining("rdma.clients.x.buffer-count"));
    // Not a value of the enum: Boot's conversion failure names the property.
    runner.withPropertyValues("rdma.provider=fpga").run(ctx -> assertThat(ctx).hasFailed()
        .getFailure().hasStackTraceContaining("rdma.provider"));
  }

  @Test
  void beansBackOffWhenTheApplicationDefinesItsOwn() {
    RdmaClients own = new RdmaClients(Map.of("mine", RdmaClient.create().port(1)));
    RdmaServer ownServer = RdmaServer.create().host("127.0.0.1").port(0).option(RdmaOption.PROVIDER, "in-memory");
    RdmaMetrics ownMetrics = new RdmaMetrics(java.util.Set.of());
    HealthIndicator ownHealth = () -> Health.unknown().build();
    inMemory.withUserConfiguration(Echo.class)
        .withBean(RdmaClients.class, () -> own)
        .withBean(RdmaServer.class, () -> ownServer)
        .withBean(RdmaMetrics.class, () -> ownMetrics)
        .withBean("rdmaHealthIndicator", HealthIndicator.class, () -> ownHealth)
        .withPropertyValues("rdma.clients.pricing.port=9000")
        .run(ctx -> {
          assertThat(ctx).hasNotFailed();
          assertThat(ctx.getBean(RdmaClients.class)).isSameAs(own);
          assertThat(ctx.getBean(RdmaServer.class)).isSameAs(ownServer);
          assertThat(ctx.getBean(RdmaMetrics.class)).isSameAs(ownMetrics);
          assertThat(ctx.getBean("rdmaHealthIndicator")).isSameAs(ownHealth);
          assertThat(ctx).doesNotHaveBean(RdmaHealthIndicator.class);
          // The lifecycle binds the application's server.
          assertThat(ctx.getBean(RdmaServerLifecycle.class).isRunning()).isTrue();
        });
    RdmaProvider ownProvider = io.rdmareactive.rdma.device.RdmaDevices.provider("in-memory");
    runner.withPropertyValues("rdma.provider=native").withBean(RdmaProvider.class, () -> ownProvider)
        .run(ctx -> assertThat(ctx.getBean(RdmaProvider.class)).isSameAs(ownProvider));
  }

  @Test
  void nothingWithoutTheTransportOnTheClasspath() {
    runner.withClassLoader(new FilteredClassLoader(RdmaServer.class)).withUserConfiguration(Echo.class)
        .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(RdmaProperties.class)
            .doesNotHaveBean(RdmaClients.class).doesNotHaveBean(RdmaServerLifecycle.class)
            .doesNotHaveBean(RdmaMetrics.class).doesNotHaveBean(RdmaHealthIndicator.class));
  }

  @Test
  void noMetricsWithoutMicrometerAndNoHealthWithoutBootHealth() {
    inMemory.withClassLoader(new FilteredClassLoader(MeterRegistry.class))
        .run(ctx -> assertThat(ctx).hasNotFailed().hasSingleBean(RdmaClients.class)
            .doesNotHaveBean(RdmaMetrics.class).hasSingleBean(RdmaHealthIndicator.class));
    inMemory.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
        .run(ctx -> assertThat(ctx).hasNotFailed().hasSingleBean(RdmaClients.class)
            .hasSingleBean(RdmaMetrics.class).doesNotHaveBean(RdmaHealthIndicator.class));
    inMemory.withPropertyValues("management.health.rdma.enabled=false")
        .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(RdmaHealthIndicator.class));
  }

  @Test
  void serverDisabledByPropertyIsNotCreated() {
    inMemory.withUserConfiguration(Echo.class).withPropertyValues("rdma.server.enabled=false")
        .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(RdmaServer.class)
            .doesNotHaveBean(RdmaServerLifecycle.class));
  }

  @Test
  void customizersAreAppliedInOrder() {
    AtomicInteger serverCustomized = new AtomicInteger();
    inMemory.withUserConfiguration(Echo.class)
        .withPropertyValues("rdma.server.host=127.0.0.1", "rdma.server.port=0", "rdma.clients.a.port=1")
        .withBean(RdmaServerCustomizer.class, () -> s -> {
          serverCustomized.incrementAndGet();
          return s.option(RdmaOption.BUFFER_COUNT, 4);
        })
        .withBean(RdmaClientCustomizer.class, () -> (name, c) -> c.port(4242))
        .run(ctx -> {
          assertThat(serverCustomized).hasValue(1);
          // The customizer's port wins over rdma.clients.a.port=1: nobody listens there.
          StepVerifier.create(ctx.getBean(RdmaClients.class).connect("a"))
              .expectErrorSatisfies(e -> assertThat(e).hasMessageContaining("4242")).verify(WAIT);
        });
  }

  @Test
  void serverStartsWithTheContextExchangesMessagesAndStopsWithIt() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    int[] port = new int[1];
    RdmaConnection[] client = new RdmaConnection[1];
    inMemory.withUserConfiguration(Echo.class).withBean(MeterRegistry.class, () -> registry)
        // Every connection on its loop's pools (none keeps buffers of its own), whose meters this reads.
        .withPropertyValues("rdma.server.host=127.0.0.1", "rdma.server.port=0", "rdma.server.loop-private-connections=0")
        .run(server -> {
          assertThat(server).hasNotFailed();
          server.getBean(RdmaMetrics.class).bindTo(registry);
          server.getBean(RdmaLoopMetrics.class).bindTo(registry);
          RdmaServerLifecycle lifecycle = server.getBean(RdmaServerLifecycle.class);
          assertThat(lifecycle.isRunning()).isTrue();
          port[0] = lifecycle.port();
          assertThat(port[0]).isPositive();
          assertThat(server.getEnvironment().getProperty("local.rdma.server.port", Integer.class))
              .isEqualTo(port[0]);
          Health up = server.getBean(RdmaHealthIndicator.class).health();
          assertThat(up.getStatus()).isEqualTo(Status.UP);
          assertThat(up.getDetails()).containsEntry("provider", "in-memory").containsEntry("serverRunning", true)
              .containsEntry("portState", "ACTIVE").containsKey("device");

          inMemory.withPropertyValues("rdma.clients.echo.host=127.0.0.1", "rdma.clients.echo.port=" + port[0],
                  "rdma.clients.echo.loop-private-connections=0")
              .run(clientCtx -> {
                RdmaClients clients = clientCtx.getBean(RdmaClients.class);
                StepVerifier.create(clients.connect("echo").flatMapMany(c -> {
                  client[0] = c;
                  return c.outbound().sendString(Mono.just("hello"))
                      .thenMany(c.inbound().receiveString().take(1));
                })).expectNext("hello").expectComplete().verify(WAIT);
                assertThat(clients.openConnections()).isEqualTo(1);
                // Its buffers are its loop's (a shared receive queue's slab, a send pool): the
                // loops' meters count them, the connection's own only what it registered alone.
                assertThat(registry.get("rdma.memory.registered").tag("endpoint", "server").gauge().value())
                    .as("the server's connection's own buffers").isZero();
                assertThat(registry.get("rdma.loop.memory.registered").tag("buffers", "receive").gauge().value())
                    .as("the loops' receive slabs").isPositive();
                assertThat(registry.get("rdma.loop.receive.queues").gauge().value()).isPositive();
                assertThat(registry.get("rdma.loop.receive.refills").functionCounter().count()).isPositive();
                assertThat(registry.get("rdma.loop.receive.posted").gauge().value())
                    .as("receives posted on the loops' SRQs: both connection ends' and the headroom").isPositive();
                assertThat(registry.get("rdma.loop.endpoints").gauge().value())
                    .as("this context's end of the connection (the client's is on its own loops)").isEqualTo(1);
              });
          // Closing the client context closed its connection.
          StepVerifier.create(client[0].onDispose()).expectComplete().verify(WAIT);
          // The server sees the disconnect a little after the client: wait for it, within WAIT. Its
          // counters are read then: its echo may still be between posting and counting when the
          // client already holds the reply (in-memory delivery happens inside the post).
          long deadline = System.nanoTime() + WAIT.toNanos();
          while (registry.get("rdma.connections.active").tag("endpoint", "server").gauge().value() > 0
              && System.nanoTime() < deadline) {
            Thread.sleep(10);
          }
          assertThat(registry.get("rdma.messages").tag("endpoint", "server").tag("direction", "in")
              .functionCounter().count()).isEqualTo(1.0);
          assertThat(registry.get("rdma.bytes").tag("endpoint", "server").tag("direction", "out")
              .functionCounter().count()).isEqualTo(5.0);
          assertThat(registry.get("rdma.sends").tag("endpoint", "server").tag("direction", "out")
              .functionCounter().count()).as("the echo, a lone message, in one SEND").isEqualTo(1.0);
          assertThat(registry.get("rdma.connections").tag("endpoint", "server").functionCounter().count())
              .isEqualTo(1.0);
          assertThat(registry.get("rdma.completion.errors").tag("endpoint", "server").functionCounter().count())
              .isZero();
          assertThat(registry.find("rdma.credit.stalls").tag("endpoint", "server").functionCounter()).isNotNull();
          assertThat(registry.get("rdma.close.flush.give.ups").tag("endpoint", "server").functionCounter().count())
              .isZero();
          // The server's one reply: one doorbell, signaled (the last of its post), its own
          // completion and the request's among those polled.
          assertThat(registry.get("rdma.doorbells").tag("endpoint", "server").functionCounter().count())
              .isGreaterThanOrEqualTo(1.0);
          assertThat(registry.get("rdma.sends.signaled").tag("endpoint", "server").functionCounter().count())
              .isGreaterThanOrEqualTo(1.0);
          assertThat(registry.get("rdma.completions.polled").tag("endpoint", "server").functionCounter().count())
              .isGreaterThanOrEqualTo(2.0);
          assertThat(registry.get("rdma.bytes.copied").tag("endpoint", "server").functionCounter().count())
              .as("the echo's 5 bytes, copied into its send buffer; the request was read in place").isEqualTo(5.0);
          assertThat(registry.get("rdma.bytes.read").tag("endpoint", "server").functionCounter().count()).isZero();
          assertThat(registry.get("rdma.memory.registered").tag("endpoint", "server").gauge().value())
              .as("closed connections pin nothing").isZero();
        });
    // The context closed: the server no longer listens.
    StepVerifier.create(RdmaClient.create().host("127.0.0.1").port(port[0])
            .option(RdmaOption.PROVIDER, "in-memory").connect())
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(io.rdmareactive.rdma.ConnectionException.class))
        .verify(WAIT);
  }

  @Test
  void aPortInUseFailsTheStartNamingTheAddress() {
    inMemory.withUserConfiguration(Echo.class).withPropertyValues("rdma.server.host=127.0.0.1", "rdma.server.port=0")
        .run(first -> {
          int port = first.getBean(RdmaServerLifecycle.class).port();
          inMemory.withUserConfiguration(Echo.class)
              .withPropertyValues("rdma.server.host=127.0.0.1", "rdma.server.port=" + port)
              .run(second -> assertThat(second).hasFailed().getFailure().rootCause()
                  .isInstanceOf(io.rdmareactive.rdma.ConnectionException.class)
                  .hasMessageContaining(String.valueOf(port)));
        });
  }

  @Test
  void healthIsDownForAnUnknownDeviceAndUpWithoutServer() {
    inMemory.withPropertyValues("rdma.device=nonexistent0").run(ctx -> {
      Health h = ctx.getBean(RdmaHealthIndicator.class).health();
      assertThat(h.getStatus()).isEqualTo(Status.DOWN);
      assertThat(h.getDetails()).containsEntry("device", "nonexistent0")
          .containsEntry("error", "device 'nonexistent0' (rdma.device) not found");
    });
    inMemory.run(ctx -> {
      Health h = ctx.getBean(RdmaHealthIndicator.class).health();
      assertThat(h.getStatus()).isEqualTo(Status.UP);
      assertThat(h.getDetails()).containsEntry("provider", "in-memory").doesNotContainKey("serverRunning");
    });
  }

  @Test
  void closingTheContextDrainsOpenServerConnections() {
    RdmaConnection[] client = new RdmaConnection[1];
    @SuppressWarnings("unchecked")
    reactor.core.publisher.Flux<String>[] inbound = new reactor.core.publisher.Flux[1];
    inMemory.withUserConfiguration(Echo.class)
        .withPropertyValues("rdma.server.host=127.0.0.1", "rdma.server.port=0").run(server -> {
          int port = server.getBean(RdmaServerLifecycle.class).port();
          client[0] = RdmaClient.create().host("127.0.0.1").port(port).option(RdmaOption.PROVIDER, "in-memory")
              .connectNow(WAIT);
          // One subscriber per connection: keep it, replaying, across the context's close.
          inbound[0] = client[0].inbound().receiveString().cache();
          inbound[0].subscribe(null, e -> {});
          StepVerifier.create(client[0].outbound().sendString(Mono.just("ping")).thenMany(inbound[0].take(1)))
              .expectNext("ping").verifyComplete();
        });
    // The server's side closed with the context: the client's inbound completes and it is freed.
    StepVerifier.create(inbound[0]).expectNext("ping").expectComplete().verify(WAIT);
    client[0].dispose();
    StepVerifier.create(client[0].onDispose()).expectComplete().verify(WAIT);
  }
}
