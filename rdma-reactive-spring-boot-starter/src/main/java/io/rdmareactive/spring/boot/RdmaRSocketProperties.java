package io.rdmareactive.spring.boot;

import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rsocket.RdmaClientTransport;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

/**
 * The {@code rdma.rsocket.*} properties: whether Boot's RSocket server listens over RDMA, and the
 * RDMA options of that server and of the requesters {@link RdmaRSocketRequesters} connects. The
 * provider and the loops are the ones of {@code rdma.provider} and {@code rdma.loops}. Validated
 * like {@link RdmaProperties}, naming the property.
 */
@ConfigurationProperties(prefix = "rdma.rsocket")
public class RdmaRSocketProperties implements Validator {
  private final Server server = new Server();
  private final Client client = new Client();

  /** Boot's RSocket server over RDMA, {@code rdma.rsocket.server.*}. */
  public Server getServer() {
    return server;
  }

  /** The requesters' connections, {@code rdma.rsocket.client.*}. */
  public Client getClient() {
    return client;
  }

  /**
   * What may wait for the peer's credits per RSocket connection ({@code max-pending-frames},
   * {@code max-pending-bytes}), the same for the server and the requesters.
   */
  public static class Pending {
    /** Frames waiting for the peer's credits per connection; beyond it the connection closes. */
    private int maxPendingFrames = RdmaClientTransport.DEFAULT_MAX_PENDING_FRAMES;

    /**
     * Bytes of frames waiting for the peer's credits per connection; beyond it the connection
     * closes. A requester's REQUEST_N times the frame size should fit it.
     */
    private DataSize maxPendingBytes = DataSize.ofBytes(RdmaClientTransport.DEFAULT_MAX_PENDING_BYTES);

    /** Frames waiting for the peer's credits per connection; beyond it the connection closes. */
    public int getMaxPendingFrames() {
      return maxPendingFrames;
    }

    /** Sets {@link #getMaxPendingFrames()}. */
    public void setMaxPendingFrames(int maxPendingFrames) {
      this.maxPendingFrames = maxPendingFrames;
    }

    /** Bytes of frames waiting for the peer's credits per connection; beyond it the connection closes. */
    public DataSize getMaxPendingBytes() {
      return maxPendingBytes;
    }

    /** Sets {@link #getMaxPendingBytes()}. */
    public void setMaxPendingBytes(DataSize maxPendingBytes) {
      this.maxPendingBytes = maxPendingBytes;
    }

    /** Checks both, naming {@code prefix}'s properties. */
    void validate(Errors errors, String prefix) {
      RdmaProperties.check(errors, prefix + ".max-pending-frames", maxPendingFrames, maxPendingFrames >= 1, "must be >= 1");
      RdmaProperties.check(errors, prefix + ".max-pending-bytes", maxPendingBytes, maxPendingBytes.toBytes() >= 1,
          "must be positive");
    }
  }

  /**
   * Boot's RSocket server (the application's {@code @MessageMapping} handlers) over RDMA. Its
   * options are {@code rdma.rsocket.server.<option>}, one per {@link RdmaOption}, as the server's.
   */
  public static class Server extends Pending {
    /** Serve Spring's RSocket handlers over RDMA instead of TCP or WebSocket. */
    private boolean enabled = false;

    /**
     * Address to listen on, an address of an RDMA device (default: spring.rsocket.server.address,
     * else 0.0.0.0, all).
     */
    private @Nullable String host;

    /** Port to listen on (default: spring.rsocket.server.port); 0 picks a free one. */
    private @Nullable Integer port;

    /** How long starting and stopping the server may take. */
    private Duration lifecycleTimeout = Duration.ofSeconds(30);

    /** Serve Spring's RSocket handlers over RDMA instead of TCP or WebSocket. */
    public boolean isEnabled() {
      return enabled;
    }

    /** Sets {@link #isEnabled()}. */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /** Address to listen on (null: spring.rsocket.server.address, else 0.0.0.0). */
    public @Nullable String getHost() {
      return host;
    }

    /** Sets {@link #getHost()}. */
    public void setHost(@Nullable String host) {
      this.host = host;
    }

    /** Port to listen on (null: spring.rsocket.server.port); 0 picks a free one. */
    public @Nullable Integer getPort() {
      return port;
    }

    /** Sets {@link #getPort()}. */
    public void setPort(@Nullable Integer port) {
      this.port = port;
    }

    /** How long starting and stopping the server may take. */
    public Duration getLifecycleTimeout() {
      return lifecycleTimeout;
    }

    /** Sets {@link #getLifecycleTimeout()}. */
    public void setLifecycleTimeout(Duration lifecycleTimeout) {
      this.lifecycleTimeout = lifecycleTimeout;
    }
  }

  /**
   * Requesters connected by host and port ({@link RdmaRSocketRequesters#requester(String, int)});
   * those connected by name use {@code rdma.clients.<name>}. Its options are
   * {@code rdma.rsocket.client.<option>}, one per {@link RdmaOption}, as a named client's.
   */
  public static class Client extends Pending {
    /** Bounds resolving, routing and the handshake together. */
    private Duration connectTimeout = Duration.ofSeconds(10);

    /** Bounds resolving, routing and the handshake together. */
    public Duration getConnectTimeout() {
      return connectTimeout;
    }

    /** Sets {@link #getConnectTimeout()}. */
    public void setConnectTimeout(Duration connectTimeout) {
      this.connectTimeout = connectTimeout;
    }

  }

  @Override
  public boolean supports(Class<?> type) {
    return RdmaRSocketProperties.class.isAssignableFrom(type);
  }

  @Override
  public void validate(Object target, Errors errors) {
    RdmaRSocketProperties p = (RdmaRSocketProperties) target;
    Server s = p.getServer();
    String host = s.getHost();
    RdmaProperties.check(errors, "rsocket.server.host", host, host == null || !host.isBlank(), "must not be blank");
    Integer port = s.getPort();
    RdmaProperties.check(errors, "rsocket.server.port", port, port == null || (port >= 0 && port <= 65_535),
        "must be 0 .. 65535");
    s.validate(errors, "rsocket.server");
    RdmaProperties.check(errors, "rsocket.server.lifecycle-timeout", s.getLifecycleTimeout(),
        !s.getLifecycleTimeout().isNegative() && !s.getLifecycleTimeout().isZero(), "must be positive");
    Client c = p.getClient();
    RdmaProperties.check(errors, "rsocket.client.connect-timeout", c.getConnectTimeout(),
        !c.getConnectTimeout().isNegative() && !c.getConnectTimeout().isZero(), "must be positive");
    c.validate(errors, "rsocket.client");
  }
}
