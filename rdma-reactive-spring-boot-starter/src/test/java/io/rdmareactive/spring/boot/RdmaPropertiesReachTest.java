package io.rdmareactive.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.spi.RdmaProvider;
import io.rdmareactive.rdma.transport.RdmaLoopResources;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaServer;
import io.rdmareactive.rsocket.RdmaClientTransport;
import io.rdmareactive.rsocket.boot.RdmaRSocketServerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.boot.rsocket.autoconfigure.RSocketMessagingAutoConfiguration;
import org.springframework.boot.rsocket.autoconfigure.RSocketRequesterAutoConfiguration;
import org.springframework.boot.rsocket.autoconfigure.RSocketServerAutoConfiguration;
import org.springframework.boot.rsocket.autoconfigure.RSocketStrategiesAutoConfiguration;
import org.springframework.boot.rsocket.server.RSocketServerFactory;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.util.unit.DataSize;

/**
 * The {@code rdma.*} properties that are not transport options (loops, provider, device, hosts,
 * ports, timeouts, RSocket's frame queue): each one, set to a value other than its default, is
 * seen where it acts. {@link #everyPropertyInTheMetadataIsCoveredHereOrByTheOptionsTest} keeps
 * the list whole: a property added to the starter without a test here fails it.
 */
class RdmaPropertiesReachTest {
  /** The properties proven below; options are {@link RdmaOptionPropertiesTest}'s. */
  static final Set<String> COVERED = Set.of("rdma.provider", "rdma.device", "rdma.completion-mode", "rdma.loops",
      "rdma.poll-budget", "rdma.clients", "rdma.server.enabled", "rdma.server.host", "rdma.server.port",
      "rdma.server.shutdown-timeout", "rdma.rsocket.server.enabled", "rdma.rsocket.server.host",
      "rdma.rsocket.server.port", "rdma.rsocket.server.max-pending-frames", "rdma.rsocket.server.max-pending-bytes",
      "rdma.rsocket.server.lifecycle-timeout", "rdma.rsocket.client.connect-timeout",
      "rdma.rsocket.client.max-pending-frames", "rdma.rsocket.client.max-pending-bytes");

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(RdmaAutoConfiguration.class, RdmaHealthContributorAutoConfiguration.class,
          RSocketStrategiesAutoConfiguration.class, RSocketMessagingAutoConfiguration.class,
          RSocketRequesterAutoConfiguration.class, RSocketServerAutoConfiguration.class,
          RdmaRSocketAutoConfiguration.class))
      .withPropertyValues("rdma.provider=in-memory");

  @Test
  void loopPropertiesShapeTheLoopsEveryTransportRunsOn() {
    runner.withUserConfiguration(RdmaAutoConfigurationTest.Echo.class)
        .withPropertyValues("rdma.loops=3", "rdma.poll-budget=7ms", "rdma.server.port=0").run(ctx -> {
          assertThat(ctx).hasNotFailed();
          RdmaLoopResources loops = ctx.getBean(RdmaLoopResources.class);
          assertThat(loops.loopCount()).isEqualTo(3);
          assertThat(loops.isBusyPoll()).isFalse();
          assertThat(loops.pollBudget()).isEqualTo(Duration.ofMillis(7));
          assertThat(ctx.getBean(RdmaServer.class).configuration().runOn()).isSameAs(loops);
        });
    runner.withPropertyValues("rdma.loops=2", "rdma.completion-mode=busy-poll").run(ctx -> {
      RdmaLoopResources loops = ctx.getBean(RdmaLoopResources.class);
      assertThat(loops.loopCount()).isEqualTo(2);
      assertThat(loops.isBusyPoll()).isTrue();
      assertThat(loops.pollBudget()).isNull();
    });
  }

  @Test
  void providerAndDeviceReachTheProviderAndTheHealthIndicator() {
    runner.withPropertyValues("rdma.device=no-such-device").run(ctx -> {
      assertThat(ctx.getBean(RdmaProvider.class).name()).isEqualTo("in-memory");
      Health health = ctx.getBean(RdmaHealthIndicator.class).health();
      assertThat(health.getDetails()).containsEntry("device", "no-such-device")
          .containsEntry("error", "device 'no-such-device' (rdma.device) not found");
    });
  }

  @Test
  void serverPropertiesReachTheServerAndItsLifecycle() {
    runner.withUserConfiguration(RdmaAutoConfigurationTest.Echo.class)
        .withPropertyValues("rdma.server.host=127.0.0.1", "rdma.server.port=0", "rdma.server.shutdown-timeout=12s")
        .run(ctx -> {
          assertThat(ctx.getBean(RdmaServer.class).configuration().host()).isEqualTo("127.0.0.1");
          assertThat(ctx.getBean(RdmaServerLifecycle.class).shutdownTimeout()).isEqualTo(Duration.ofSeconds(12));
          assertThat(ctx.getBean(RdmaClients.class).closeTimeout()).isEqualTo(Duration.ofSeconds(12));
        });
    runner.withUserConfiguration(RdmaAutoConfigurationTest.Echo.class).withPropertyValues("rdma.server.enabled=false")
        .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(RdmaServer.class)
            .doesNotHaveBean(RdmaServerLifecycle.class));
  }

  @Test
  void rsocketPropertiesReachTheRSocketServerAndRequesters() {
    runner.withUserConfiguration(RdmaOptionPropertiesTest.Routes.class)
        .withPropertyValues("rdma.rsocket.server.enabled=true", "rdma.rsocket.server.host=127.0.0.1",
            "rdma.rsocket.server.port=7399", "rdma.rsocket.server.max-pending-frames=77",
            "rdma.rsocket.server.max-pending-bytes=3MB", "rdma.rsocket.client.max-pending-bytes=5KB",
            "rdma.rsocket.server.lifecycle-timeout=9s", "rdma.rsocket.client.connect-timeout=4s",
            "rdma.rsocket.client.max-pending-frames=55", "rdma.server.shutdown-timeout=11s")
        .run(ctx -> {
          assertThat(ctx).hasNotFailed();
          RdmaRSocketServerFactory factory = (RdmaRSocketServerFactory) ctx.getBean(RSocketServerFactory.class);
          assertThat(factory.lifecycleTimeout()).isEqualTo(Duration.ofSeconds(9));
          assertThat(factory.transport().maxPendingFrames()).isEqualTo(77);
          assertThat(factory.transport().maxPendingBytes()).isEqualTo(3L << 20);
          assertThat(factory.transport().server().configuration().host()).isEqualTo("127.0.0.1");
          assertThat(factory.transport().server().configuration().port()).isEqualTo(7399);
          RdmaRSocketRequesters requesters = ctx.getBean(RdmaRSocketRequesters.class);
          assertThat(requesters.maxPendingFrames()).isEqualTo(55);
          assertThat(requesters.transport("10.0.0.9", 9).maxPendingFrames()).isEqualTo(55);
          assertThat(requesters.maxPendingBytes()).isEqualTo(5L << 10);
          assertThat(requesters.transport("10.0.0.9", 9).maxPendingBytes()).isEqualTo(5L << 10);
          assertThat(requesters.client().configuration().connectTimeout()).isEqualTo(Duration.ofSeconds(4));
          assertThat(requesters.closeTimeout()).isEqualTo(Duration.ofSeconds(11));
        });
    runner.withUserConfiguration(RdmaOptionPropertiesTest.Routes.class)
        .run(ctx -> assertThat(ctx).doesNotHaveBean(RdmaRSocketServerFactory.class));
  }

  /**
   * The processor cannot read the pending bounds' defaults (constants of another module), so the
   * additional metadata gives them: an IDE then shows the transports' own defaults.
   */
  @Test
  void thePendingBoundsShowTheTransportsDefaultsInTheMetadata() throws IOException {
    Map<String, Object> defaults = new HashMap<>();
    try (InputStream in = RdmaProperties.class.getClassLoader()
        .getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
      assertThat(in).as("the processor's metadata").isNotNull();
      for (Object p : (List<?>) JsonParserFactory.getJsonParser()
          .parseMap(new String(in.readAllBytes(), StandardCharsets.UTF_8)).get("properties")) {
        Map<?, ?> e = (Map<?, ?>) p;
        defaults.put((String) e.get("name"), e.get("defaultValue"));
      }
    }
    for (String side : List.of("server", "client")) {
      String prefix = "rdma.rsocket." + side + ".max-pending-";
      assertThat(defaults.get(prefix + "frames")).as(prefix + "frames").isInstanceOf(Number.class);
      assertThat(((Number) defaults.get(prefix + "frames")).longValue()).as(prefix + "frames")
          .isEqualTo(RdmaClientTransport.DEFAULT_MAX_PENDING_FRAMES);
      assertThat(defaults.get(prefix + "bytes")).as(prefix + "bytes").isNotNull();
      assertThat(DataSize.parse((String) defaults.get(prefix + "bytes")).toBytes())
          .as(prefix + "bytes").isEqualTo(RdmaClientTransport.DEFAULT_MAX_PENDING_BYTES);
    }
  }

  @Test
  void everyPropertyInTheMetadataIsCoveredHereOrByTheOptionsTest() throws IOException {
    Set<String> expected = new TreeSet<>(COVERED);
    for (String prefix : List.of("rdma.server", "rdma.rsocket.server", "rdma.rsocket.client")) {
      boolean server = !prefix.endsWith("client");
      for (RdmaOption<?> o : RdmaOption.values()) {
        if (RdmaOptionBinder.bound(o, server)) {
          expected.add(prefix + "." + RdmaOptionBinder.property(o));
        }
      }
    }
    Set<String> listed = new TreeSet<>();
    for (String file : List.of("META-INF/spring-configuration-metadata.json",
        "META-INF/additional-spring-configuration-metadata.json")) {
      try (InputStream in = RdmaProperties.class.getClassLoader().getResourceAsStream(file)) {
        assertThat(in).as(file).isNotNull();
        Map<String, Object> json = JsonParserFactory.getJsonParser()
            .parseMap(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        for (Object p : (List<?>) json.get("properties")) {
          String name = (String) ((Map<?, ?>) p).get("name");
          if (!name.startsWith("rdma.clients.")) { // a named client's options are the server's, proven there
            listed.add(name);
          }
        }
      }
    }
    assertThat(listed).as("rdma.* properties in the metadata; each needs a test here").isEqualTo(expected);
  }
}
