package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.RdmaDevices;
import io.rdmareactive.rdma.spi.ConnectionProvider;
import io.rdmareactive.rdma.spi.EndpointOptions;
import io.rdmareactive.rdma.verbs.CompletionStreamOptions;
import java.time.Duration;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/** The settings of a server or client; immutable, each {@code with} gives a copy. */
record TransportConfig(String host, int port, int bufferSize, int bufferCount, int maxMessageSize,
    int inlineThreshold, String provider, boolean raw, @Nullable RdmaLoopResources runOn, Duration connectTimeout,
    Limits limits, Liveness liveness) {

  static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);

  static TransportConfig defaults(String host) {
    return new TransportConfig(host, 0, RdmaOption.BUFFER_SIZE.defaultValue(), RdmaOption.BUFFER_COUNT.defaultValue(),
        RdmaOption.MAX_MESSAGE_SIZE.defaultValue(), RdmaOption.INLINE_THRESHOLD.defaultValue(),
        RdmaOption.PROVIDER.defaultValue(), RdmaOption.RAW.defaultValue(), null, DEFAULT_CONNECT_TIMEOUT, Limits.DEFAULTS,
        Liveness.DEFAULTS);
  }

  TransportConfig withHost(String host) {
    return new TransportConfig(host, port, bufferSize, bufferCount, maxMessageSize, inlineThreshold,
        provider, raw, runOn, connectTimeout, limits, liveness);
  }

  TransportConfig withPort(int port) {
    Addresses.checkPort(port);
    return new TransportConfig(host, port, bufferSize, bufferCount, maxMessageSize, inlineThreshold,
        provider, raw, runOn, connectTimeout, limits, liveness);
  }

  private TransportConfig withLimits(Limits l) {
    return with(l, liveness);
  }

  private TransportConfig with(Limits l, Liveness v) {
    return new TransportConfig(host, port, bufferSize, bufferCount, maxMessageSize, inlineThreshold,
        provider, raw, runOn, connectTimeout, l, v);
  }

  /**
   * Limits: a server's connections, pending handshakes and how long a handshake may take; the
   * reassembly bytes a connection holds, and a server's total of them.
   */
  record Limits(int maxConnections, int maxPendingHandshakes, Duration handshakeTimeout, int maxInboundBytes,
      long maxServerInboundBytes) {
    static final Limits DEFAULTS = new Limits(RdmaOption.MAX_CONNECTIONS.defaultValue(),
        RdmaOption.MAX_PENDING_HANDSHAKES.defaultValue(), RdmaOption.HANDSHAKE_TIMEOUT.defaultValue(),
        RdmaOption.MAX_INBOUND_BYTES.defaultValue(), RdmaOption.MAX_SERVER_INBOUND_BYTES.defaultValue());
  }

  private TransportConfig withLiveness(Liveness l) {
    return with(limits, l);
  }

  /**
   * Deadlines that keep a connection from hanging on its peer: the close wait, the QP's retries
   * and the keepalive interval (zero: none).
   */
  record Liveness(Duration closeTimeout, int retryCount, int rnrRetry, Duration keepaliveInterval) {
    static final Liveness DEFAULTS = new Liveness(RdmaOption.CLOSE_TIMEOUT.defaultValue(),
        RdmaOption.RETRY_COUNT.defaultValue(), RdmaOption.RNR_RETRY.defaultValue(),
        RdmaOption.KEEPALIVE_INTERVAL.defaultValue());
  }

  TransportConfig withLoops(RdmaLoopResources loops) {
    return new TransportConfig(host, port, bufferSize, bufferCount, maxMessageSize, inlineThreshold,
        provider, raw, loops, connectTimeout, limits, liveness);
  }

  TransportConfig withConnectTimeout(Duration timeout) {
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("connect timeout must be positive, was " + timeout);
    }
    return new TransportConfig(host, port, bufferSize, bufferCount, maxMessageSize, inlineThreshold,
        provider, raw, runOn, timeout, limits, liveness);
  }

  <T> TransportConfig with(RdmaOption<T> option, T value) {
    T v = option.validate(value);
    int bs = bufferSize;
    int bc = bufferCount;
    int mm = maxMessageSize;
    int it = inlineThreshold;
    String pr = provider;
    boolean rw = raw;
    if (option == RdmaOption.BUFFER_SIZE) {
      bs = (Integer) v;
    } else if (option == RdmaOption.BUFFER_COUNT) {
      bc = (Integer) v;
    } else if (option == RdmaOption.MAX_MESSAGE_SIZE) {
      mm = (Integer) v;
    } else if (option == RdmaOption.INLINE_THRESHOLD) {
      it = (Integer) v;
    } else if (option == RdmaOption.MAX_CONNECTIONS) {
      return withLimits(new Limits((Integer) v, limits.maxPendingHandshakes, limits.handshakeTimeout,
          limits.maxInboundBytes, limits.maxServerInboundBytes));
    } else if (option == RdmaOption.MAX_PENDING_HANDSHAKES) {
      return withLimits(new Limits(limits.maxConnections, (Integer) v, limits.handshakeTimeout,
          limits.maxInboundBytes, limits.maxServerInboundBytes));
    } else if (option == RdmaOption.HANDSHAKE_TIMEOUT) {
      return withLimits(new Limits(limits.maxConnections, limits.maxPendingHandshakes, (Duration) v,
          limits.maxInboundBytes, limits.maxServerInboundBytes));
    } else if (option == RdmaOption.MAX_INBOUND_BYTES) {
      return withLimits(new Limits(limits.maxConnections, limits.maxPendingHandshakes, limits.handshakeTimeout,
          (Integer) v, limits.maxServerInboundBytes));
    } else if (option == RdmaOption.MAX_SERVER_INBOUND_BYTES) {
      return withLimits(new Limits(limits.maxConnections, limits.maxPendingHandshakes, limits.handshakeTimeout,
          limits.maxInboundBytes, (Long) v));
    } else if (option == RdmaOption.CLOSE_TIMEOUT) {
      return withLiveness(new Liveness((Duration) v, liveness.retryCount, liveness.rnrRetry,
          liveness.keepaliveInterval));
    } else if (option == RdmaOption.RETRY_COUNT) {
      return withLiveness(new Liveness(liveness.closeTimeout, (Integer) v, liveness.rnrRetry,
          liveness.keepaliveInterval));
    } else if (option == RdmaOption.RNR_RETRY) {
      return withLiveness(new Liveness(liveness.closeTimeout, liveness.retryCount, (Integer) v,
          liveness.keepaliveInterval));
    } else if (option == RdmaOption.KEEPALIVE_INTERVAL) {
      return withLiveness(new Liveness(liveness.closeTimeout, liveness.retryCount, liveness.rnrRetry, (Duration) v));
    } else if (option == RdmaOption.PROVIDER) {
      pr = ((String) v).toLowerCase(Locale.ROOT);
    } else if (option == RdmaOption.RAW) {
      rw = (Boolean) v;
    } else {
      throw new IllegalArgumentException("unknown option " + option);
    }
    return new TransportConfig(host, port, bs, bc, mm, it, pr, rw, runOn, connectTimeout, limits, liveness);
  }

  /** Receive buffers: framed mode keeps two beyond the demand-driven ones (see ConnectionOperations). */
  int receiveBuffers() {
    return raw ? bufferCount : bufferCount + ConnectionOperations.RESERVE;
  }

  /** Send work requests: a data send per buffer plus room for credit updates. */
  int sendQueueDepth() {
    return raw ? bufferCount : bufferCount + ConnectionOperations.RESERVE;
  }

  /** The endpoint options of a connection through {@code provider}, its CQ on the loops' channels. */
  EndpointOptions endpointOptions(ConnectionProvider provider, byte[] privateData) {
    return new EndpointOptions(sendQueueDepth(), receiveBuffers(), inlineThreshold, privateData,
        loops().channels(provider), liveness.retryCount(), liveness.rnrRetry());
  }

  /** The loops given with runOn, else the shared default. */
  RdmaLoopResources loops() {
    return runOn != null ? runOn : RdmaLoopResources.shared();
  }

  CompletionStreamOptions completionOptions() {
    return loops().completionOptions();
  }

  ConnectionProvider connectionProvider() {
    return (provider.equals("default") ? RdmaDevices.provider() : RdmaDevices.provider(provider)).connections();
  }

  /** Runs {@code first}, then {@code then}: hooks compose as Reactor Netty's do. */
  static java.util.function.Consumer<RdmaConnection> andThen(
      java.util.function.Consumer<? super RdmaConnection> first, java.util.function.Consumer<? super RdmaConnection> then) {
    java.util.Objects.requireNonNull(then, "hook");
    return c -> {
      first.accept(c);
      then.accept(c);
    };
  }
}
