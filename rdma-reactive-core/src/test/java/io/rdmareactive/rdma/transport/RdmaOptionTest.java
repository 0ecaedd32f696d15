package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The option model: the list of options, their checks, and the configuration servers and clients expose. */
class RdmaOptionTest {

  @Test
  void valuesListsEveryConstantInDeclarationOrder() throws IllegalAccessException {
    List<RdmaOption<?>> constants = new ArrayList<>();
    for (Field f : RdmaOption.class.getDeclaredFields()) {
      if (Modifier.isPublic(f.getModifiers()) && Modifier.isStatic(f.getModifiers())
          && f.getType() == RdmaOption.class) {
        RdmaOption<?> o = (RdmaOption<?>) f.get(null);
        assertThat(o.name()).as("the constant's name").isEqualTo(f.getName());
        constants.add(o);
      }
    }
    assertThat(RdmaOption.values()).containsExactlyElementsOf(constants);
    for (RdmaOption<?> o : RdmaOption.values()) {
      assertThat(o.index).isEqualTo(RdmaOption.values().indexOf(o));
      assertThat(o.type()).isIn(Integer.class, Long.class, Duration.class, String.class, Boolean.class);
      assertThat(o.range()).isNotBlank();
      assertThat(o.validate(o.defaultValue())).as(o + "'s default is valid").isEqualTo(o.defaultValue());
    }
    assertThat(RdmaOption.values().stream().filter(RdmaOption::serverOnly).toList()).containsExactly(
        RdmaOption.MAX_SERVER_INBOUND_BYTES, RdmaOption.MAX_CONNECTIONS, RdmaOption.MAX_PENDING_HANDSHAKES,
        RdmaOption.HANDSHAKE_TIMEOUT);
  }

  @Test
  void validateNamesTheOptionAndItsRangeAndGivesTheCanonicalValue() {
    assertThatThrownBy(() -> RdmaOption.BUFFER_COUNT.validate(0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("BUFFER_COUNT must be 1 .. 16384, was 0");
    assertThatThrownBy(() -> RdmaOption.CLOSE_TIMEOUT.validate(7)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("CLOSE_TIMEOUT takes a Duration, was java.lang.Integer");
    assertThatThrownBy(() -> RdmaOption.KEEPALIVE_INTERVAL.validate(Duration.ofMillis(5)))
        .hasMessage("KEEPALIVE_INTERVAL must be 0 (off) or 10 ms .. 1 day, was PT0.005S");
    assertThatThrownBy(() -> RdmaOption.RAW.validate(null)).isInstanceOf(NullPointerException.class)
        .hasMessage("RAW");
    assertThat(RdmaOption.PROVIDER.validate("In-Memory")).isEqualTo("in-memory");
    assertThatThrownBy(() -> RdmaOption.PROVIDER.validate("fpga")).hasMessageContaining("PROVIDER must be");
  }

  @Test
  void configurationShowsEveryOptionDefaultsIncluded() {
    TransportConfig c = RdmaServer.create().configuration();
    assertThat(c.host()).isEqualTo("0.0.0.0");
    assertThat(c.port()).isZero();
    assertThat(c.runOn()).isNull();
    assertThat(c.options().keySet()).containsExactlyElementsOf(RdmaOption.values());
    for (RdmaOption<?> o : RdmaOption.values()) {
      assertThat(c.get(o)).isEqualTo(o.defaultValue());
    }
    assertThatThrownBy(() -> c.options().put(RdmaOption.RAW, true)).isInstanceOf(UnsupportedOperationException.class);
    assertThat(RdmaClient.create().configuration().host()).isEqualTo("localhost");
    assertThat(RdmaClient.create().configuration().connectTimeout()).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void eachSetterConfiguresACopyAndLeavesTheOriginal() {
    RdmaLoopResources loops = RdmaLoopResources.create("opt-test", 1);
    try {
      RdmaClient base = RdmaClient.create();
      RdmaClient c = base.host("10.0.0.1").port(7000).option(RdmaOption.BUFFER_COUNT, 8)
          .option(RdmaOption.PROVIDER, "IN-MEMORY").option(RdmaOption.CLOSE_TIMEOUT, Duration.ofSeconds(2))
          .runOn(loops).connectTimeout(Duration.ofSeconds(3));
      TransportConfig cc = c.configuration();
      assertThat(cc.host()).isEqualTo("10.0.0.1");
      assertThat(cc.port()).isEqualTo(7000);
      assertThat(cc.get(RdmaOption.BUFFER_COUNT)).isEqualTo(8);
      assertThat(cc.get(RdmaOption.PROVIDER)).isEqualTo("in-memory");
      assertThat(cc.get(RdmaOption.CLOSE_TIMEOUT)).isEqualTo(Duration.ofSeconds(2));
      assertThat(cc.runOn()).isSameAs(loops);
      assertThat(cc.connectTimeout()).isEqualTo(Duration.ofSeconds(3));
      assertThat(base.configuration().options()).isEqualTo(RdmaClient.create().configuration().options());
      assertThat(base.configuration().port()).isZero();
      // A rejected value leaves nothing half-set, and names the option.
      assertThatThrownBy(() -> c.option(RdmaOption.INLINE_THRESHOLD, 4096))
          .hasMessage("INLINE_THRESHOLD must be 0 .. 1024, was 4096");
      assertThatThrownBy(() -> c.port(70_000)).isInstanceOf(IllegalArgumentException.class);
      assertThat(c.configuration().get(RdmaOption.INLINE_THRESHOLD)).isZero();
    } finally {
      loops.dispose();
    }
  }

  @Test
  void theSharedBaseReturnsTheConcreteKindAndHooksCompose() {
    List<String> calls = new ArrayList<>();
    RdmaServer s = RdmaServer.create().host("127.0.0.1").port(0).option(RdmaOption.RAW, true)
        .doOnDisconnected(c -> calls.add("a")).doOnDisconnected(c -> calls.add("b"))
        .doOnConnection(c -> calls.add("c"));
    s.configuration().onDisconnected().accept(null);
    s.configuration().onConnected().accept(null);
    assertThat(calls).containsExactly("a", "b", "c");
    assertThat(s.configuration().get(RdmaOption.RAW)).isTrue();
    Map<RdmaOption<?>, Object> options = s.configuration().options();
    assertThat(options).containsEntry(RdmaOption.RAW, true).containsEntry(RdmaOption.BUFFER_SIZE, 16 * 1024);
    assertThatThrownBy(() -> s.doOnDisconnected(null)).isInstanceOf(NullPointerException.class);
  }
}
