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

    /** The name {@link io.rdmareactive.rdma.RdmaDevices#provider(String)} takes. */
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

  /** Event mode: how long a loop keeps polling after the last completion before it sleeps. */
  private Duration pollBudget = RdmaLoopResources.DEFAULT_POLL_BUDGET;

  private final Server server = new Server();

  /** Named clients, e.g. {@code rdma.clients.pricing.host}. */
  private final Map<String, Client> clients = new LinkedHashMap<>();

  public Provider getProvider() {
    return provider;
  }

  public void setProvider(Provider provider) {
    this.provider = provider;
  }

  public @Nullable String getDevice() {
    return device;
  }

  public void setDevice(@Nullable String device) {
    this.device = device;
  }

  public CompletionStreamOptions.Mode getCompletionMode() {
    return completionMode;
  }

  public void setCompletionMode(CompletionStreamOptions.Mode completionMode) {
    this.completionMode = completionMode;
  }

  public int getLoops() {
    return loops;
  }

  public void setLoops(int loops) {
    this.loops = loops;
  }

  public Duration getPollBudget() {
    return pollBudget;
  }

  public void setPollBudget(Duration pollBudget) {
    this.pollBudget = pollBudget;
  }

  public Server getServer() {
    return server;
  }

  public Map<String, Client> getClients() {
    return clients;
  }

  /** Settings a server and a client share: buffers and framing. */
  public abstract static class Transport {
    /** Bytes per send and receive buffer: the largest message that travels unfragmented. */
    private int bufferSize = 16384;

    /** Buffers each way: at most this many messages in flight per direction. */
    private int bufferCount = 64;

    /** Largest message (fragmented as needed); larger sends fail. */
    private int maxMessageSize = 16777216;

    /** Sends of at most this many bytes go inline; 0 disables. */
    private int inlineThreshold = 0;

    /** Reassembly bytes one connection holds for its subscriber (RdmaOption.MAX_INBOUND_BYTES). */
    private int maxInboundBytes = RdmaOption.MAX_INBOUND_BYTES.defaultValue();

    /** Raw mode: no framing or credits, for plain librdmacm peers. */
    private boolean raw = false;

    /** How long closing waits for the peer to acknowledge posted sends before it disconnects anyway. */
    private Duration closeTimeout = RdmaOption.CLOSE_TIMEOUT.defaultValue();

    /**
     * Transport retries of an unacknowledged send before the connection is reset (0 .. 7; Soft-RoCE
     * retries forever at 7). The connecting side's value governs both ends of a connection.
     */
    private int retryCount = RdmaOption.RETRY_COUNT.defaultValue();

    /** Retries of a send the peer answered "receiver not ready" (0 .. 7; 7 retries forever). */
    private int rnrRetry = RdmaOption.RNR_RETRY.defaultValue();

    /** Idle time after which the peer is probed, so that a dead one is noticed (0: never). */
    private Duration keepaliveInterval = RdmaOption.KEEPALIVE_INTERVAL.defaultValue();

    public int getBufferSize() {
      return bufferSize;
    }

    public void setBufferSize(int bufferSize) {
      this.bufferSize = bufferSize;
    }

    public int getBufferCount() {
      return bufferCount;
    }

    public void setBufferCount(int bufferCount) {
      this.bufferCount = bufferCount;
    }

    public int getMaxMessageSize() {
      return maxMessageSize;
    }

    public void setMaxMessageSize(int maxMessageSize) {
      this.maxMessageSize = maxMessageSize;
    }

    public int getMaxInboundBytes() {
      return maxInboundBytes;
    }

    public void setMaxInboundBytes(int maxInboundBytes) {
      this.maxInboundBytes = maxInboundBytes;
    }

    public int getInlineThreshold() {
      return inlineThreshold;
    }

    public void setInlineThreshold(int inlineThreshold) {
      this.inlineThreshold = inlineThreshold;
    }

    public boolean isRaw() {
      return raw;
    }

    public void setRaw(boolean raw) {
      this.raw = raw;
    }

    public Duration getCloseTimeout() {
      return closeTimeout;
    }

    public void setCloseTimeout(Duration closeTimeout) {
      this.closeTimeout = closeTimeout;
    }

    public int getRetryCount() {
      return retryCount;
    }

    public void setRetryCount(int retryCount) {
      this.retryCount = retryCount;
    }

    public int getRnrRetry() {
      return rnrRetry;
    }

    public void setRnrRetry(int rnrRetry) {
      this.rnrRetry = rnrRetry;
    }

    public Duration getKeepaliveInterval() {
      return keepaliveInterval;
    }

    public void setKeepaliveInterval(Duration keepaliveInterval) {
      this.keepaliveInterval = keepaliveInterval;
    }
  }

  /** The server, started with the context when an {@link RdmaHandler} bean exists. */
  public static class Server extends Transport {
    /** Whether to start a server (it also needs an RdmaHandler bean). */
    private boolean enabled = true;

    /** Address to listen on: an address of an RDMA device (0.0.0.0: all). */
    private String host = "0.0.0.0";

    /** Port to listen on; 0 picks a free one (published as local.rdma.server.port). */
    private int port = 7471;

    /** How long stopping waits for connections to drain and be freed. */
    private Duration shutdownTimeout = Duration.ofSeconds(30);

    /** Connections served at once; connect requests beyond it are refused, saying why. */
    private int maxConnections = RdmaOption.MAX_CONNECTIONS.defaultValue();

    /** Connect requests accepted but not yet established; beyond it requests are refused. */
    private int maxPendingHandshakes = RdmaOption.MAX_PENDING_HANDSHAKES.defaultValue();

    /** Reassembly bytes all connections together hold (RdmaOption.MAX_SERVER_INBOUND_BYTES). */
    private long maxServerInboundBytes = RdmaOption.MAX_SERVER_INBOUND_BYTES.defaultValue();

    public long getMaxServerInboundBytes() {
      return maxServerInboundBytes;
    }

    public void setMaxServerInboundBytes(long maxServerInboundBytes) {
      this.maxServerInboundBytes = maxServerInboundBytes;
    }

    /** How long an accepted connection may take to become established. */
    private Duration handshakeTimeout = RdmaOption.HANDSHAKE_TIMEOUT.defaultValue();

    public int getMaxConnections() {
      return maxConnections;
    }

    public void setMaxConnections(int maxConnections) {
      this.maxConnections = maxConnections;
    }

    public int getMaxPendingHandshakes() {
      return maxPendingHandshakes;
    }

    public void setMaxPendingHandshakes(int maxPendingHandshakes) {
      this.maxPendingHandshakes = maxPendingHandshakes;
    }

    public Duration getHandshakeTimeout() {
      return handshakeTimeout;
    }

    public void setHandshakeTimeout(Duration handshakeTimeout) {
      this.handshakeTimeout = handshakeTimeout;
    }

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public String getHost() {
      return host;
    }

    public void setHost(String host) {
      this.host = host;
    }

    public int getPort() {
      return port;
    }

    public void setPort(int port) {
      this.port = port;
    }

    public Duration getShutdownTimeout() {
      return shutdownTimeout;
    }

    public void setShutdownTimeout(Duration shutdownTimeout) {
      this.shutdownTimeout = shutdownTimeout;
    }
  }

  /** A named client: where it connects and how. */
  public static class Client extends Transport {
    /** Host to connect to: the server's RDMA address. */
    private String host = "localhost";

    /** Port to connect to. */
    private int port = 7471;

    /** Bounds resolving, routing and the handshake together. */
    private Duration connectTimeout = Duration.ofSeconds(10);

    public String getHost() {
      return host;
    }

    public void setHost(String host) {
      this.host = host;
    }

    public int getPort() {
      return port;
    }

    public void setPort(int port) {
      this.port = port;
    }

    public Duration getConnectTimeout() {
      return connectTimeout;
    }

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
    check(errors, "server.max-connections", s.getMaxConnections(), s.getMaxConnections() >= 1, "must be >= 1");
    check(errors, "server.max-server-inbound-bytes", s.getMaxServerInboundBytes(), s.getMaxServerInboundBytes() >= 1024,
        "must be >= 1024");
    check(errors, "server.max-pending-handshakes", s.getMaxPendingHandshakes(), s.getMaxPendingHandshakes() >= 1,
        "must be >= 1");
    check(errors, "server.handshake-timeout", s.getHandshakeTimeout(),
        !s.getHandshakeTimeout().isNegative() && !s.getHandshakeTimeout().isZero(), "must be positive");
    check(errors, "loops", p.getLoops(), p.getLoops() >= 1, "must be >= 1");
    check(errors, "poll-budget", p.getPollBudget(), !p.getPollBudget().isNegative(), "must not be negative");
    transport(errors, "server", s);
    p.getClients().forEach((name, c) -> {
      String at = "clients." + name;
      check(errors, at + ".host", c.getHost(), !c.getHost().isBlank(), "must not be blank");
      check(errors, at + ".port", c.getPort(), c.getPort() >= 1 && c.getPort() <= 65_535, "must be 1 .. 65535");
      check(errors, at + ".connect-timeout", c.getConnectTimeout(),
          !c.getConnectTimeout().isNegative() && !c.getConnectTimeout().isZero(), "must be positive");
      transport(errors, at, c);
    });
  }

  static void transport(Errors errors, String at, Transport t) {
    check(errors, at + ".buffer-size", t.getBufferSize(), t.getBufferSize() >= 64 && t.getBufferSize() <= (1 << 24),
        "must be 64 .. 16777216");
    check(errors, at + ".buffer-count", t.getBufferCount(), t.getBufferCount() >= 1 && t.getBufferCount() <= 16_384,
        "must be 1 .. 16384");
    check(errors, at + ".max-message-size", t.getMaxMessageSize(),
        t.getMaxMessageSize() >= 1 && t.getMaxMessageSize() <= 256 << 20, "must be 1 .. 268435456");
    check(errors, at + ".max-inbound-bytes", t.getMaxInboundBytes(),
        t.getMaxInboundBytes() >= 1024 && t.getMaxInboundBytes() <= 1 << 30, "must be 1024 .. 1073741824");
    check(errors, at + ".inline-threshold", t.getInlineThreshold(),
        t.getInlineThreshold() >= 0 && t.getInlineThreshold() <= 1024, "must be 0 .. 1024");
    check(errors, at + ".close-timeout", t.getCloseTimeout(),
        !t.getCloseTimeout().isNegative() && !t.getCloseTimeout().isZero(), "must be positive");
    check(errors, at + ".retry-count", t.getRetryCount(), t.getRetryCount() >= 0 && t.getRetryCount() <= 7,
        "must be 0 .. 7");
    check(errors, at + ".rnr-retry", t.getRnrRetry(), t.getRnrRetry() >= 0 && t.getRnrRetry() <= 7,
        "must be 0 .. 7 (7: forever)");
    Duration k = t.getKeepaliveInterval();
    check(errors, at + ".keepalive-interval", k,
        k.isZero() || (k.compareTo(Duration.ofMillis(10)) >= 0 && k.compareTo(Duration.ofDays(1)) <= 0),
        "must be 0 (off) or 10ms .. 1d");
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
