package io.rdmareactive.spring.boot;

import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaServer;
import io.rdmareactive.rdma.transport.RdmaTransport;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * The one place the starter turns properties into {@link RdmaOption}s, for the server, the named
 * clients and the RSocket server and requesters alike: each option is bound from
 * {@code <prefix>.<option-name>} (e.g. {@code rdma.server.buffer-size}) and checked by the option
 * itself, so no range is written twice and a new option needs no code here. The provider is
 * {@code rdma.provider}'s, for all.
 */
final class RdmaOptionBinder {
  private final Binder binder;
  private final String provider;

  RdmaOptionBinder(Environment environment, String provider) {
    this.binder = Binder.get(environment);
    this.provider = provider;
  }

  /** The property name of {@code option} under a prefix: {@code BUFFER_SIZE} is {@code buffer-size}. */
  static String property(RdmaOption<?> option) {
    return option.name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /** Whether {@code option} is a property under each server's or client's prefix (not {@code rdma.provider}). */
  static boolean bound(RdmaOption<?> option, boolean server) {
    return option != RdmaOption.PROVIDER && (server || !option.serverOnly());
  }

  /**
   * The names under {@code prefix} (e.g. the clients of {@code rdma.clients}), those with only
   * options set included, which a properties class without option fields would not see.
   */
  Set<String> names(String prefix) {
    return binder.bind(prefix, Bindable.mapOf(String.class, Object.class)).map(Map::keySet).orElse(Set.of());
  }

  /**
   * {@code transport} with the provider and every option set under {@code prefix}; options not set
   * keep their defaults.
   *
   * @throws IllegalArgumentException naming each invalid property and the option's range
   */
  <T extends RdmaTransport<T>> T apply(T transport, String prefix) {
    T t = transport.option(RdmaOption.PROVIDER, provider);
    List<String> invalid = new ArrayList<>();
    for (RdmaOption<?> option : RdmaOption.values()) {
      if (bound(option, transport instanceof RdmaServer)) {
        try {
          t = set(t, option, prefix + "." + property(option));
        } catch (IllegalArgumentException e) {
          invalid.add(prefix + "." + property(option) + ": " + e.getMessage());
        }
      }
    }
    if (!invalid.isEmpty()) {
      throw new IllegalArgumentException("Invalid RDMA option properties: " + String.join("; ", invalid));
    }
    return t;
  }

  private <T extends RdmaTransport<T>, V> T set(T transport, RdmaOption<V> option, String property) {
    return binder.bind(property, Bindable.of(option.type())).map(v -> transport.option(option, v)).orElse(transport);
  }
}
