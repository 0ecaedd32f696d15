package io.rdmareactive.spring.boot;

import io.rdmareactive.rdma.spi.RdmaProvider;
import io.rdmareactive.rdma.verbs.PortAttributes;
import io.rdmareactive.rdma.verbs.RdmaContext;
import java.net.InetSocketAddress;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * UP when the provider sees the device ({@code rdma.device}, or its first), the device's port 1
 * is ACTIVE and, where the server is configured, it is listening. Details: provider, device, port
 * state, link layer, active MTU, server address.
 */
public class RdmaHealthIndicator extends AbstractHealthIndicator {
  private final RdmaProvider provider;
  private final @Nullable String device;
  private final @Nullable RdmaServerLifecycle server;

  /** Reports on {@code device} of {@code provider} (null: its first device) and, when there is one, whether {@code server} is bound. */
  public RdmaHealthIndicator(RdmaProvider provider, @Nullable String device, @Nullable RdmaServerLifecycle server) {
    super("RDMA health check failed");
    this.provider = provider;
    this.device = device;
    this.server = server;
  }

  @Override
  protected void doHealthCheck(Health.Builder builder) {
    builder.withDetail("provider", provider.name());
    List<String> names = provider.devices().stream().map(RdmaProvider.DeviceInfo::name).toList();
    boolean up = true;
    String name = device != null ? device : names.isEmpty() ? null : names.getFirst();
    if (name == null) {
      builder.withDetail("devices", names).withDetail("error", "no RDMA device");
      up = false;
    } else if (!names.contains(name)) {
      builder.withDetail("device", name).withDetail("devices", names)
          .withDetail("error", "device '" + name + "' (rdma.device) not found");
      up = false;
    } else {
      try (RdmaContext ctx = provider.open(name)) {
        PortAttributes port = ctx.queryPort(1);
        builder.withDetail("device", name).withDetail("port", 1).withDetail("portState", port.state().name())
            .withDetail("linkLayer", port.linkLayer().name())
            .withDetail("activeMtu", PortAttributes.mtuBytes(port.activeMtu()));
        up = port.state() == PortAttributes.PortState.ACTIVE;
      }
    }
    if (server != null) {
      InetSocketAddress address = server.address();
      builder.withDetail("serverRunning", address != null);
      if (address != null) {
        builder.withDetail("serverAddress", address.getAddress().getHostAddress() + ":" + address.getPort());
      } else {
        up = false;
      }
    }
    if (up) {
      builder.up();
    } else {
      builder.down();
    }
  }
}
