package io.rdmareactive.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.transport.RdmaLoopResources;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaServer;
import io.rdmareactive.rdma.transport.TransportConfig;
import io.rdmareactive.rsocket.boot.RdmaRSocketServerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.boot.rsocket.autoconfigure.RSocketMessagingAutoConfiguration;
import org.springframework.boot.rsocket.autoconfigure.RSocketRequesterAutoConfiguration;
import org.springframework.boot.rsocket.autoconfigure.RSocketServerAutoConfiguration;
import org.springframework.boot.rsocket.autoconfigure.RSocketStrategiesAutoConfiguration;
import org.springframework.boot.rsocket.server.RSocketServerFactory;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.messaging.handler.annotation.MessageMapping;
import org.springframework.stereotype.Controller;
import reactor.core.publisher.Mono;

/**
 * Every {@link RdmaOption}, as a property of the server, a named client, the RSocket server and
 * the RSocket requesters, reaches the transport's configuration; and the configuration metadata
 * lists exactly those properties. Options are enumerated from {@link RdmaOption#values()}, so a
 * new option is covered without touching this test.
 */
class RdmaOptionPropertiesTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(RdmaAutoConfiguration.class, RSocketStrategiesAutoConfiguration.class,
          RSocketMessagingAutoConfiguration.class, RSocketRequesterAutoConfiguration.class,
          RSocketServerAutoConfiguration.class, RdmaRSocketAutoConfiguration.class))
      .withPropertyValues("rdma.provider=in-memory", "rdma.loops=1");

  @Controller
  static class Routes {
    @MessageMapping("greet")
    Mono<String> greet(String name) {
      return Mono.just("hello " + name);
    }
  }

  /** A valid value other than the default: the property can only have put it there. */
  static Object sample(RdmaOption<?> option) {
    Object d = option.defaultValue();
    List<Object> candidates = switch (d) {
      case Integer i -> List.of(i - 1, i + 1);
      case Long l -> List.of(l - 1, l + 1);
      case Duration t -> List.of(t.minusSeconds(1), t.plusSeconds(1));
      case Boolean b -> List.of(!b);
      default -> throw new AssertionError("no sample for " + option + " of " + option.type());
    };
    for (Object c : candidates) {
      try {
        return option.validate(c);
      } catch (IllegalArgumentException outOfRange) {
        // the next candidate
      }
    }
    throw new AssertionError("no valid sample for " + option);
  }

  static String text(Object value) {
    return value instanceof Duration d ? d.toMillis() + "ms" : value.toString();
  }

  /** {@code prefix.<option>=<sample>} for each option bound there, skipping {@code except}. */
  static Map<RdmaOption<?>, Object> samples(boolean server, Set<RdmaOption<?>> except) {
    Map<RdmaOption<?>, Object> values = new LinkedHashMap<>();
    for (RdmaOption<?> o : RdmaOption.values()) {
      if (RdmaOptionBinder.bound(o, server) && !except.contains(o)) {
        values.put(o, sample(o));
      }
    }
    return values;
  }

  static String[] properties(String prefix, Map<RdmaOption<?>, Object> values, String... more) {
    List<String> all = new ArrayList<>(List.of(more));
    values.forEach((o, v) -> all.add(prefix + "." + RdmaOptionBinder.property(o) + "=" + text(v)));
    return all.toArray(String[]::new);
  }

  static void assertReached(TransportConfig config, Map<RdmaOption<?>, Object> values, boolean server) {
    for (RdmaOption<?> o : RdmaOption.values()) {
      Object expected = o == RdmaOption.PROVIDER ? "in-memory" : values.getOrDefault(o, o.defaultValue());
      if (!server && o.serverOnly()) {
        expected = o.defaultValue();
      }
      assertThat(config.get(o)).as(o.name()).isEqualTo(expected);
    }
  }

  @Test
  void everyServerAndNamedClientPropertyReachesTheTransport() {
    Map<RdmaOption<?>, Object> server = samples(true, Set.of());
    Map<RdmaOption<?>, Object> client = samples(false, Set.of());
    List<String> props = new ArrayList<>(List.of(properties("rdma.server", server, "rdma.server.host=127.0.0.1",
        "rdma.server.port=0")));
    props.addAll(List.of(properties("rdma.clients.pricing", client, "rdma.clients.pricing.host=10.0.0.1",
        "rdma.clients.pricing.port=9000", "rdma.clients.pricing.connect-timeout=3s")));
    runner.withUserConfiguration(RdmaAutoConfigurationTest.Echo.class)
        .withPropertyValues(props.toArray(String[]::new)).run(ctx -> {
      assertThat(ctx).hasNotFailed();
      RdmaLoopResources loops = ctx.getBean(RdmaLoopResources.class);
      TransportConfig s = ctx.getBean(RdmaServer.class).configuration();
      assertThat(s.host()).isEqualTo("127.0.0.1");
      assertThat(s.port()).isZero();
      assertThat(s.runOn()).isSameAs(loops);
      assertReached(s, server, true);
      TransportConfig c = ctx.getBean(RdmaClients.class).get("pricing").configuration();
      assertThat(c.host()).isEqualTo("10.0.0.1");
      assertThat(c.port()).isEqualTo(9000);
      assertThat(c.connectTimeout()).isEqualTo(Duration.ofSeconds(3));
      assertThat(c.runOn()).isSameAs(loops);
      assertReached(c, client, false);
    });
  }

  @Test
  void everyRSocketServerAndRequesterPropertyReachesTheTransport() {
    // RSocket needs the framing: raw=true fails the start (RdmaRSocketAutoConfigurationTest).
    Map<RdmaOption<?>, Object> server = samples(true, Set.of(RdmaOption.RAW));
    Map<RdmaOption<?>, Object> client = samples(false, Set.of(RdmaOption.RAW));
    List<String> props = new ArrayList<>(List.of(properties("rdma.rsocket.server", server,
        "rdma.rsocket.server.enabled=true", "rdma.rsocket.server.host=127.0.0.1", "rdma.rsocket.server.port=0")));
    props.addAll(List.of(properties("rdma.rsocket.client", client, "rdma.rsocket.client.connect-timeout=4s")));
    runner.withUserConfiguration(Routes.class).withPropertyValues(props.toArray(String[]::new)).run(ctx -> {
      assertThat(ctx).hasNotFailed();
      RdmaLoopResources loops = ctx.getBean(RdmaLoopResources.class);
      RSocketServerFactory factory = ctx.getBean(RSocketServerFactory.class);
      assertThat(factory).isInstanceOf(RdmaRSocketServerFactory.class);
      TransportConfig s = ((RdmaRSocketServerFactory) factory).transport().server().configuration();
      assertThat(s.host()).isEqualTo("127.0.0.1");
      assertThat(s.runOn()).isSameAs(loops);
      assertReached(s, server, true);
      TransportConfig c = ctx.getBean(RdmaRSocketRequesters.class).client().configuration();
      assertThat(c.connectTimeout()).isEqualTo(Duration.ofSeconds(4));
      assertThat(c.runOn()).isSameAs(loops);
      assertReached(c, client, false);
    });
  }

  @Test
  void aBadOptionFailsTheStartWithTheOptionsOwnMessageNamingTheProperty() {
    runner.withUserConfiguration(RdmaAutoConfigurationTest.Echo.class)
        .withPropertyValues("rdma.server.buffer-count=0", "rdma.server.keepalive-interval=5ms")
        .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
            .hasMessageContaining("rdma.server.buffer-count: " + message(RdmaOption.BUFFER_COUNT, 0))
            .hasMessageContaining("rdma.server.keepalive-interval: "
                + message(RdmaOption.KEEPALIVE_INTERVAL, Duration.ofMillis(5))));
    runner.withPropertyValues("rdma.clients.x.rnr-retry=8").run(ctx -> assertThat(ctx).hasFailed()
        .getFailure().rootCause()
        .hasMessageContaining("rdma.clients.x.rnr-retry: " + message(RdmaOption.RNR_RETRY, 8)));
    runner.withUserConfiguration(Routes.class).withPropertyValues("rdma.rsocket.server.enabled=true",
        "rdma.rsocket.server.port=0", "rdma.rsocket.server.handshake-timeout=0s").run(ctx -> assertThat(ctx)
            .hasFailed().getFailure().rootCause().hasMessageContaining("rdma.rsocket.server.handshake-timeout: "
                + message(RdmaOption.HANDSHAKE_TIMEOUT, Duration.ZERO)));
  }

  private static String message(RdmaOption<?> option, Object bad) {
    try {
      option.validate(bad);
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
    throw new AssertionError(bad + " is valid for " + option);
  }

  @Test
  @SuppressWarnings("unchecked")
  void theMetadataListsEachOptionUnderEachPrefixWithItsTypeDefaultAndRange() throws IOException {
    String json;
    try (InputStream in = Objects.requireNonNull(getClass().getResourceAsStream(
        "/META-INF/spring-configuration-metadata.json"), "the processor's metadata")) {
      json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    List<Map<String, Object>> entries = (List<Map<String, Object>>) JsonParserFactory.getJsonParser().parseMap(json)
        .get("properties");
    Map<String, Map<String, Object>> byName = new HashMap<>();
    for (Map<String, Object> e : entries) {
      if (RdmaOption.class.getName().equals(e.get("sourceType"))) {
        byName.put((String) e.get("name"), e);
      }
    }
    Set<String> expected = new TreeSet<>();
    Map<String, Boolean> prefixes = Map.of("rdma.server", true, "rdma.rsocket.server", true,
        "rdma.rsocket.client", false);
    prefixes.forEach((prefix, server) -> {
      for (RdmaOption<?> o : RdmaOption.values()) {
        if (!RdmaOptionBinder.bound(o, server)) {
          continue;
        }
        String name = prefix + "." + RdmaOptionBinder.property(o);
        expected.add(name);
        Map<String, Object> e = byName.get(name);
        assertThat(e).as(name + " in additional-spring-configuration-metadata.json").isNotNull();
        assertThat(e.get("type")).as(name).isEqualTo(o.type().getName());
        Object d = e.get("defaultValue");
        Object value = o.type() == Duration.class ? DurationStyle.detectAndParse((String) d)
            : d instanceof Number n ? (o.type() == Long.class ? (Object) n.longValue() : (Object) n.intValue()) : d;
        assertThat(value).as(name + " default").isEqualTo(o.defaultValue());
        assertThat((String) e.get("description")).as(name + " description").endsWith("(" + o.range() + ").");
      }
    });
    assertThat(new TreeSet<>(byName.keySet())).as("no option property without its option").isEqualTo(expected);
  }
}
