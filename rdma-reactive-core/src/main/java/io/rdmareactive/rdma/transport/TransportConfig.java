package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.device.RdmaDevices;
import io.rdmareactive.rdma.spi.ConnectionProvider;
import io.rdmareactive.rdma.spi.EndpointOptions;
import io.rdmareactive.rdma.verbs.CompletionStreamOptions;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The settings of an {@link RdmaServer} or {@link RdmaClient}, read through their
 * {@code configuration()}: every {@link RdmaOption}'s value, where to bind or connect, the loops.
 * Immutable: a server or client configures a copy, as Reactor Netty's {@code TransportConfig}.
 */
public final class TransportConfig {
  static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);

  // Set only on a fresh copy, before it is shared: a config is immutable once returned.
  private String host;
  private int port;
  /** By {@link RdmaOption#index}; every slot holds a value, the option's default unless set. */
  private Object[] values;
  private @Nullable RdmaLoopResources runOn;
  private Duration connectTimeout;
  private Consumer<? super RdmaConnection> onConnected;
  private Consumer<? super RdmaConnection> onDisconnected;

  private TransportConfig(String host) {
    this.host = host;
    List<RdmaOption<?>> all = RdmaOption.values();
    this.values = new Object[all.size()];
    for (RdmaOption<?> o : all) {
      values[o.index] = o.defaultValue();
    }
    this.connectTimeout = DEFAULT_CONNECT_TIMEOUT;
    this.onConnected = c -> {};
    this.onDisconnected = c -> {};
  }

  private TransportConfig(TransportConfig from) {
    this.host = from.host;
    this.port = from.port;
    this.values = from.values;
    this.runOn = from.runOn;
    this.connectTimeout = from.connectTimeout;
    this.onConnected = from.onConnected;
    this.onDisconnected = from.onDisconnected;
  }

  static TransportConfig defaults(String host) {
    return new TransportConfig(host);
  }

  /** The host a server binds to or a client connects to. */
  public String host() {
    return host;
  }

  /** The port; for a server 0 means any free one. */
  public int port() {
    return port;
  }

  /** {@code option}'s value: the one set, else its default. */
  public <T> T get(RdmaOption<T> option) {
    return option.type().cast(values[option.index]);
  }

  /** Every option with its value, in {@link RdmaOption#values()} order; unmodifiable. */
  public Map<RdmaOption<?>, Object> options() {
    Map<RdmaOption<?>, Object> all = new LinkedHashMap<>();
    for (RdmaOption<?> o : RdmaOption.values()) {
      all.put(o, values[o.index]);
    }
    return Collections.unmodifiableMap(all);
  }

  /** The loops given with {@code runOn}, or null for {@link RdmaLoopResources#shared()}. */
  public @Nullable RdmaLoopResources runOn() {
    return runOn;
  }

  /** A client's bound on resolving, routing and the handshake together (servers do not use it). */
  public Duration connectTimeout() {
    return connectTimeout;
  }

  // ---- copies --------------------------------------------------------------------------------

  TransportConfig withHost(String host) {
    Objects.requireNonNull(host, "host");
    return copy(c -> c.host = host);
  }

  TransportConfig withPort(int port) {
    Addresses.checkPort(port);
    return copy(c -> c.port = port);
  }

  /** A copy with {@code option} set to {@code value}, checked by the option. */
  <T> TransportConfig with(RdmaOption<T> option, T value) {
    T v = option.validate(value);
    return copy(c -> {
      c.values = Arrays.copyOf(values, values.length);
      c.values[option.index] = v;
    });
  }

  TransportConfig withLoops(RdmaLoopResources loops) {
    Objects.requireNonNull(loops, "loops");
    return copy(c -> c.runOn = loops);
  }

  TransportConfig withConnectTimeout(Duration timeout) {
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("connect timeout must be positive, was " + timeout);
    }
    return copy(c -> c.connectTimeout = timeout);
  }

  /** A copy that also calls {@code hook} with each established connection; hooks compose as Reactor Netty's do. */
  TransportConfig withOnConnected(Consumer<? super RdmaConnection> hook) {
    Consumer<RdmaConnection> both = andThen(onConnected, hook);
    return copy(c -> c.onConnected = both);
  }

  /** A copy that also calls {@code hook} with each closed and freed connection. */
  TransportConfig withOnDisconnected(Consumer<? super RdmaConnection> hook) {
    Consumer<RdmaConnection> both = andThen(onDisconnected, hook);
    return copy(c -> c.onDisconnected = both);
  }

  /** A copy of this, changed by {@code change} before anyone else sees it. */
  private TransportConfig copy(Consumer<TransportConfig> change) {
    TransportConfig c = new TransportConfig(this);
    change.accept(c);
    return c;
  }

  private static Consumer<RdmaConnection> andThen(Consumer<? super RdmaConnection> first,
      Consumer<? super RdmaConnection> then) {
    Objects.requireNonNull(then, "hook");
    return c -> {
      first.accept(c);
      then.accept(c);
    };
  }

  // ---- what the engine reads -----------------------------------------------------------------

  Consumer<? super RdmaConnection> onConnected() {
    return onConnected;
  }

  Consumer<? super RdmaConnection> onDisconnected() {
    return onDisconnected;
  }

  // The sizes most parts read, named for brevity.
  boolean raw() {
    return get(RdmaOption.RAW);
  }

  int bufferSize() {
    return get(RdmaOption.BUFFER_SIZE);
  }

  int bufferCount() {
    return get(RdmaOption.BUFFER_COUNT);
  }

  int maxMessageSize() {
    return get(RdmaOption.MAX_MESSAGE_SIZE);
  }

  /** The largest message this side takes, as its hello says: within the reassembly budgets too. */
  long inboundMessageLimit() {
    return Math.min(maxMessageSize(), Math.min(get(RdmaOption.MAX_INBOUND_BYTES), get(RdmaOption.MAX_SERVER_INBOUND_BYTES)));
  }

  /** Our own hello, sent in the handshake (empty in raw mode). */
  byte[] hello() {
    return raw() ? new byte[0] : new Protocol.Hello(bufferSize(), bufferCount(), (int) inboundMessageLimit()).encode();
  }

  int inlineThreshold() {
    return get(RdmaOption.INLINE_THRESHOLD);
  }

  /** Receive buffers: framed mode keeps {@link Protocol#RESERVE} beyond the demand-driven ones. */
  int receiveBuffers() {
    return raw() ? bufferCount() : Protocol.withReserve(bufferCount());
  }

  /** Send work requests: a data send per buffer plus room for credit updates. */
  int sendQueueDepth() {
    return raw() ? bufferCount() : Protocol.withReserve(bufferCount());
  }

  /** The endpoint options of a connection through {@code provider}, its CQ on the loops' channels. */
  EndpointOptions endpointOptions(ConnectionProvider provider, byte[] privateData) {
    return new EndpointOptions(sendQueueDepth(), receiveBuffers(), inlineThreshold(), privateData,
        loops().channels(provider), get(RdmaOption.RETRY_COUNT), get(RdmaOption.RNR_RETRY), loops().domains(provider),
        raw() || !get(RdmaOption.SHARED_RECEIVE_QUEUE) ? null
            : loops().receiveQueues(bufferSize(), get(RdmaOption.LOOP_RECEIVE_BUFFERS), receiveBuffers()));
  }

  /** The loops given with runOn, else the shared default. */
  RdmaLoopResources loops() {
    return runOn != null ? runOn : RdmaLoopResources.shared();
  }

  CompletionStreamOptions completionOptions() {
    return loops().completionOptions();
  }

  ConnectionProvider connectionProvider() {
    String provider = get(RdmaOption.PROVIDER);
    return (provider.equals("default") ? RdmaDevices.provider() : RdmaDevices.provider(provider)).connections();
  }

  @Override
  public String toString() {
    return "TransportConfig[" + host + ":" + port + ", " + options() + "]";
  }
}
