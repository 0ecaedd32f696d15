package io.rdmareactive.spring.boot;

import io.rdmareactive.rdma.transport.RdmaLoopResources;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.verbs.CompletionStreamOptions;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

/**
 * The {@code rdma.*} properties. Validates itself (Boot runs a properties object that is a
 * {@link Validator} after binding), so a bad value fails the context's start with a message naming
 * the property, e.g. {@code rdma.server.port must be 0 .. 65535, was -1}.
 */
@ConfigurationProperties(prefix = "rdma")
public class RdmaProperties implements Validator {
  /** Which verbs provider is used; the environment variable RDMA_PROVIDER binds here too. */
  public enum Provider {
    /** Native when an RDMA device is present, otherwise in-memory. */
    AUTO,
    /** libibverbs and librdmacm (needs rdma-reactive-native and a device). */
    NATIVE,
    /** The pure-Java provider: connections within this JVM only. */
    IN_MEMORY;

    /** The name {@link io.rdmareactive.rdma.device.RdmaDevices#provider(String)} takes. */
    public String selection() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
  }

  /** Verbs provider: auto, native or in-memory. */
  private Provider provider = Provider.AUTO;

  /** RDMA device the health indicator reports on (default: the provider's first device). */
  private @Nullable String device;

  /**
   * How the loops wait for completions, for the server and every client: auto or event (the
   * default: each loop polls for poll-budget, then sleeps on its completion channel), or busy-poll
   * (each loop spins over its connections' CQs).
   */
  private CompletionStreamOptions.Mode completionMode = CompletionStreamOptions.Mode.AUTO;

  /** Loop threads shared by the server's and the clients' connections (default max(cores, 4)). */
  private int loops = RdmaLoopResources.DEFAULT_LOOP_COUNT;

  /**
   * Event mode: how long a loop keeps polling after the last completion before it sleeps; it
   * adapts as {@link RdmaLoopResources} describes.
   */
  private Duration pollBudget = RdmaLoopResources.DEFAULT_POLL_BUDGET;

  private final Server server = new Server();

  /** Named clients, e.g. {@code rdma.clients.pricing.host}. */
  private final Map<String, Client> clients = new LinkedHashMap<>();

  /** Verbs provider: auto, native or in-memory. */
  public Provider getProvider() {
    return provider;
  }

  /** Sets {@link #getProvider()}. */
  public void setProvider(Provider provider) {
    this.provider = provider;
  }

  /** RDMA device the health indicator reports on (null: the provider's first device). */
  public @Nullable String getDevice() {
    return device;
  }

  /** Sets {@link #getDevice()}. */
  public void setDevice(@Nullable String device) {
    this.device = device;
  }

  /** How the loops wait for completions, for the server and every client. */
  public CompletionStreamOptions.Mode getCompletionMode() {
    return completionMode;
  }

  /** Sets {@link #getCompletionMode()}. */
  public void setCompletionMode(CompletionStreamOptions.Mode completionMode) {
    this.completionMode = completionMode;
  }

  /** Loop threads shared by the server's and the clients' connections (default max(cores, 4)). */
  public int getLoops() {
    return loops;
  }

  /** Sets {@link #getLoops()}. */
  public void setLoops(int loops) {
    this.loops = loops;
  }

  /**
   * Event mode: how long a loop keeps polling after the last completion before it sleeps; it
   * adapts as {@link RdmaLoopResources} describes.
   */
  public Duration getPollBudget() {
    return pollBudget;
  }

  /** Sets {@link #getPollBudget()}. */
  public void setPollBudget(Duration pollBudget) {
    this.pollBudget = pollBudget;
  }

  /** The server's properties, {@code rdma.server.*}. */
  public Server getServer() {
    return server;
  }

  /** Named clients, e.g. {@code rdma.clients.pricing.host}. */
  public Map<String, Client> getClients() {
    return clients;
  }

  /**
   * The server, started with the context when an {@link RdmaHandler} bean exists. Its options are
   * {@code rdma.server.<option>}, one per {@link RdmaOption} (e.g. {@code rdma.server.buffer-size}),
   * applied and checked by the option itself.
   */
  public static class Server {
    /** Whether to start a server (it also needs an RdmaHandler bean). */
    private boolean enabled = true;

    /** Address to listen on: an address of an RDMA device (0.0.0.0: all). */
    private String host = "0.0.0.0";

    /** Port to listen on; 0 picks a free one (published as local.rdma.server.port). */
    private int port = 7471;

    /** How long stopping waits for connections to drain and be freed. */
    private Duration shutdownTimeout = Duration.ofSeconds(30);

    /** Whether to start a server (it also needs an {@link RdmaHandler} bean). */
    public boolean isEnabled() {
      return enabled;
    }

    /** Sets {@link #isEnabled()}. */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /** Address to listen on: an address of an RDMA device (0.0.0.0: all). */
    public String getHost() {
      return host;
    }

    /** Sets {@link #getHost()}. */
    public void setHost(String host) {
      this.host = host;
    }

    /** Port to listen on; 0 picks a free one (published as local.rdma.server.port). */
    public int getPort() {
      return port;
    }

    /** Sets {@link #getPort()}. */
    public void setPort(int port) {
      this.port = port;
    }

    /** How long stopping waits for connections to drain and be freed. */
    public Duration getShutdownTimeout() {
      return shutdownTimeout;
    }

    /** Sets {@link #getShutdownTimeout()}. */
    public void setShutdownTimeout(Duration shutdownTimeout) {
      this.shutdownTimeout = shutdownTimeout;
    }
  }

  /**
   * A named client: where it connects and how. Its options are {@code rdma.clients.<name>.<option>},
   * one per {@link RdmaOption}, applied and checked by the option itself.
   */
  public static class Client {
    /** Host to connect to: the server's RDMA address. */
    private String host = "localhost";

    /** Port to connect to. */
    private int port = 7471;

    /** Bounds resolving, routing and the handshake together. */
    private Duration connectTimeout = Duration.ofSeconds(10);

    /** Host to connect to: the server's RDMA address. */
    public String getHost() {
      return host;
    }

    /** Sets {@link #getHost()}. */
    public void setHost(String host) {
      this.host = host;
    }

    /** Port to connect to. */
    public int getPort() {
      return port;
    }

    /** Sets {@link #getPort()}. */
    public void setPort(int port) {
      this.port = port;
    }

    /** Bounds resolving, routing and the handshake together. */
    public Duration getConnectTimeout() {
      return connectTimeout;
    }

    /** Sets {@link #getConnectTimeout()}. */
    public void setConnectTimeout(Duration connectTimeout) {
      this.connectTimeout = connectTimeout;
    }
  }

  // ---- validation ---------------------------------------------------------------------------

  @Override
  public boolean supports(Class<?> type) {
    return RdmaProperties.class.isAssignableFrom(type);
  }

  @Override
  public void validate(Object target, Errors errors) {
    RdmaProperties p = (RdmaProperties) target;
    Server s = p.getServer();
    check(errors, "server.host", s.getHost(), !s.getHost().isBlank(), "must not be blank");
    check(errors, "server.port", s.getPort(), s.getPort() >= 0 && s.getPort() <= 65_535, "must be 0 .. 65535");
    check(errors, "server.shutdown-timeout", s.getShutdownTimeout(), !s.getShutdownTimeout().isNegative(),
        "must not be negative");
    check(errors, "loops", p.getLoops(), p.getLoops() >= 1, "must be >= 1");
    check(errors, "poll-budget", p.getPollBudget(), !p.getPollBudget().isNegative(), "must not be negative");
    p.getClients().forEach((name, c) -> {
      String at = "clients." + name;
      check(errors, at + ".host", c.getHost(), !c.getHost().isBlank(), "must not be blank");
      check(errors, at + ".port", c.getPort(), c.getPort() >= 1 && c.getPort() <= 65_535, "must be 1 .. 65535");
      check(errors, at + ".connect-timeout", c.getConnectTimeout(),
          !c.getConnectTimeout().isNegative() && !c.getConnectTimeout().isZero(), "must be positive");
    });
  }

  /**
   * A global error (not a field error: map keys make bean paths fragile) whose message names the
   * full property, which is what Boot's exception and failure analysis show.
   */
  static void check(Errors errors, String property, Object value, boolean ok, String rule) {
    if (!ok) {
      String name = "rdma." + property;
      errors.reject("rdma.invalid", new Object[] {name, value}, name + " " + rule + ", was " + value);
    }
  }
}
