package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.spi.EndpointOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

/**
 * A typed connection option for {@link RdmaTransport#option}: its name, type, valid range and
 * default, and the check every value passes. {@link #values()} lists them all, for documentation
 * and for configuration binders such as the Boot starter, which apply and validate each option
 * through {@link #validate} instead of restating its range.
 *
 * @param <T> the value's type
 */
public final class RdmaOption<T> {
  // Before the constants: each constant adds itself here, in declaration order.
  private static final List<RdmaOption<?>> ALL = new ArrayList<>();

  /** Bytes per send and receive buffer, the largest unfragmented message (default 16 KiB). */
  public static final RdmaOption<Integer> BUFFER_SIZE =
      new RdmaOption<>("BUFFER_SIZE", Integer.class, v -> v >= 64 && v <= (1 << 24), "64 .. 16 MiB", 16 * 1024);
  /** Buffers each way, the queue depth: at most this many messages in flight per direction (default 64). */
  public static final RdmaOption<Integer> BUFFER_COUNT =
      new RdmaOption<>("BUFFER_COUNT", Integer.class, v -> v >= 1 && v <= 16_384, "1 .. 16384", 64);
  /**
   * Largest message, fragmented as needed; larger sends fail with MessageTooLargeException, larger
   * arrivals fail the connection (default 16 MiB, at most 256 MiB: a peer can make a connection
   * hold this much heap while it reassembles).
   */
  public static final RdmaOption<Integer> MAX_MESSAGE_SIZE =
      new RdmaOption<>("MAX_MESSAGE_SIZE", Integer.class, v -> v >= 1 && v <= 256 << 20, "1 .. 268435456", 16 << 20);
  /**
   * Bytes of messages reassembled from fragments that one connection holds for its subscriber: the
   * one arriving, counted at the size its first fragment declares, plus those waiting for demand
   * (default 32 MiB, 1 KiB .. 1 GiB). A peer that would go beyond it gets no credits until the
   * subscriber takes some; the largest message announced to the peer is at most this. Messages
   * that fit one buffer wait in their receive buffer and are bounded by BUFFER_COUNT instead.
   */
  public static final RdmaOption<Integer> MAX_INBOUND_BYTES = new RdmaOption<>("MAX_INBOUND_BYTES", Integer.class,
      v -> v >= 1024 && v <= 1 << 30, "1024 .. 1073741824", 32 << 20);
  /**
   * Servers: the same as MAX_INBOUND_BYTES, across all of the server's connections together
   * (default 48 MiB, at least 1 KiB). A connection whose message would go beyond it gets no
   * credits until other connections' messages are delivered or dropped, so peers together never
   * make a server hold more reassembly memory than this.
   */
  public static final RdmaOption<Long> MAX_SERVER_INBOUND_BYTES = new RdmaOption<>("MAX_SERVER_INBOUND_BYTES",
      Long.class, v -> v >= 1024, ">= 1024", 48L << 20, true, v -> v);
  /**
   * Messages from registered memory ({@code OutboundMessage.of(region, offset, length)}) longer
   * than this go by rendezvous: the peer pulls them with RDMA READ into pooled memory and the
   * library copies no byte on either side (default 512 KiB, provisional until measured on a quiet
   * machine: on rxe the per-message registration the rendezvous needs costs about as much as the
   * receive copy of 0.2-1.3 MiB it saves; see docs/design.md). 0 disables the rendezvous.
   */
  public static final RdmaOption<Integer> RENDEZVOUS_THRESHOLD = new RdmaOption<>("RENDEZVOUS_THRESHOLD", Integer.class,
      v -> v >= 0 && v <= 256 << 20, "0 .. 268435456", 512 << 10);
  /**
   * Bytes one connection has being pulled by RDMA READ at once (default 4 MiB, 64 KiB .. 1 GiB):
   * a rendezvous message is read in fragments of at most 512 KiB, as many at a time as this allows.
   */
  public static final RdmaOption<Integer> MAX_READ_BYTES = new RdmaOption<>("MAX_READ_BYTES", Integer.class,
      v -> v >= 64 << 10 && v <= 1 << 30, "65536 .. 1073741824", 4 << 20);
  /** Sends of at most this many bytes go inline (IBV_SEND_INLINE); 0 disables (default). */
  public static final RdmaOption<Integer> INLINE_THRESHOLD =
      new RdmaOption<>("INLINE_THRESHOLD", Integer.class, v -> v >= 0 && v <= 1024, "0 .. 1024", 0);
  /**
   * Servers: connections served at once (default 10,000); a connect request beyond it is refused,
   * and the client's {@code ConnectionException(REFUSED)} says so.
   */
  public static final RdmaOption<Integer> MAX_CONNECTIONS =
      new RdmaOption<>("MAX_CONNECTIONS", Integer.class, v -> v >= 1, ">= 1", 10_000, true, v -> v);
  /**
   * Servers: connect requests let in but not yet established (default 128); beyond it a request
   * is refused before any verbs object or buffer is made for it. Requests the server has not yet
   * taken wait at most this many, and at most HANDSHAKE_TIMEOUT.
   */
  public static final RdmaOption<Integer> MAX_PENDING_HANDSHAKES =
      new RdmaOption<>("MAX_PENDING_HANDSHAKES", Integer.class, v -> v >= 1, ">= 1", 128, true, v -> v);
  /** Servers: how long an accepted connection may take to become established (default 10 s). */
  public static final RdmaOption<Duration> HANDSHAKE_TIMEOUT = new RdmaOption<>("HANDSHAKE_TIMEOUT", Duration.class,
      v -> !v.isNegative() && !v.isZero(), "positive", Duration.ofSeconds(10), true, v -> v);
  /**
   * How long {@code dispose()} waits for the peer to acknowledge the sends already posted before
   * it disconnects anyway (default 5 s); sends still unacknowledged then fail with
   * {@code ConnectionException(TIMED_OUT)}. A peer that never posts receives cannot hold a close.
   */
  public static final RdmaOption<Duration> CLOSE_TIMEOUT = new RdmaOption<>("CLOSE_TIMEOUT", Duration.class,
      v -> !v.isNegative() && !v.isZero(), "positive", Duration.ofSeconds(5));
  /**
   * Transport retries of an unacknowledged send before it fails with RETRY_EXC_ERR and the
   * connection is reset (0 .. 7, default 6; each waits the CM's ACK timeout). The connecting
   * side's value governs both ends: the CM carries it in the connect request and the accepting
   * side's QP takes it from there, so on a server it is the most a connect request may ask for:
   * a request for more is refused ({@code REFUSED} naming this option). Soft-RoCE (rxe) retries
   * forever at 7, hence the default of 6.
   */
  public static final RdmaOption<Integer> RETRY_COUNT =
      new RdmaOption<>("RETRY_COUNT", Integer.class, v -> v >= 0 && v <= 7, "0 .. 7", EndpointOptions.DEFAULT_RETRY_COUNT);
  /**
   * Retries of a send the peer answered "receiver not ready" before it fails with
   * RNR_RETRY_EXC_ERR and the connection is reset (0 .. 7, default 6, finite). 7 is InfiniBand's
   * "retry forever": then a peer that posts no receives holds such a send until CLOSE_TIMEOUT
   * ends the connection. Framed mode never sends beyond the peer's credits, so only a broken
   * peer or raw mode meets RNR. The CM applies the connecting side's count to the accepting QP
   * too, so on a server it is the most a connect request may ask for (more is refused); a server
   * that allows 7 bounds a stuck send with KEEPALIVE_INTERVAL.
   */
  public static final RdmaOption<Integer> RNR_RETRY =
      new RdmaOption<>("RNR_RETRY", Integer.class, v -> v >= 0 && v <= 7, "0 .. 7 (7: forever)", 6);
  /**
   * How long a connection may go without any sign of its peer (nothing arrived, nothing
   * acknowledged) before it probes the path with a keepalive: a zero-length RDMA WRITE, which the
   * peer's adapter acknowledges without consuming a receive or a credit, and which the peer's
   * application never sees. A probe, or any send in flight, not acknowledged within an interval
   * fails the connection (RESET naming the keepalive): a dead peer or path, or a peer that stopped
   * receiving while the QP retries. Duration.ZERO, the default, sends none: an idle connection
   * then notices a dead peer only when it next sends, after RETRY_COUNT retries.
   */
  public static final RdmaOption<Duration> KEEPALIVE_INTERVAL = new RdmaOption<>("KEEPALIVE_INTERVAL", Duration.class,
      v -> v.isZero() || (v.compareTo(Duration.ofMillis(10)) >= 0 && v.compareTo(Duration.ofDays(1)) <= 0),
      "0 (off) or 10 ms .. 1 day", Duration.ZERO);
  /** The verbs provider: {@code auto}, {@code native} or {@code in-memory} (default: the rdma.provider selection). */
  public static final RdmaOption<String> PROVIDER = new RdmaOption<>("PROVIDER", String.class,
      v -> switch (v) {
        case "auto", "native", "in-memory", "default" -> true;
        default -> false;
      }, "auto, native, in-memory or default", "default", false, v -> v.toLowerCase(Locale.ROOT));
  /**
   * Framed connections receive through their loop's shared receive queue (one per loop, device
   * and buffer size, with one slab of registered buffers; default true): memory that does not grow
   * with connections. Each connection is guaranteed its credit reserve plus one buffer, and
   * borrows up to BUFFER_COUNT more while the slab has them; a peer sending beyond its grants is
   * failed on its own connection. False, or a device without SRQ, or raw mode or thread-per-
   * connection loops: each connection has its own receive queue and buffers.
   */
  public static final RdmaOption<Boolean> SHARED_RECEIVE_QUEUE =
      new RdmaOption<>("SHARED_RECEIVE_QUEUE", Boolean.class, v -> true, "true or false", true);
  /**
   * With SHARED_RECEIVE_QUEUE: the most receive buffers one loop's slab registers per device and
   * buffer size (default 16,384: 256 MiB of 16 KiB buffers at most, registered only as used; 5,000
   * connections' guarantees of 3 buffers each plus one connection's headroom; the SRQ is also
   * capped by the device's max_srq_wr). A connection that the slab cannot guarantee its 3
   * buffers is refused ({@code ConnectionException(REFUSED)} naming this option).
   */
  public static final RdmaOption<Integer> LOOP_RECEIVE_BUFFERS = new RdmaOption<>("LOOP_RECEIVE_BUFFERS", Integer.class,
      v -> v >= 128 && v <= 1 << 20, "128 .. 1048576", 16_384);
  /**
   * The most send buffers one loop's pool registers per device and buffer size (default 16,384:
   * 256 MiB of 16 KiB buffers at most, registered as used). Connections on loops borrow a send
   * buffer per SEND and give it back on its completion, each at most BUFFER_COUNT at once; one
   * that finds the pool at its cap waits for the next buffer given back. Thread-per-connection
   * loops, and a loop's first LOOP_PRIVATE_CONNECTIONS: each connection registers its own.
   */
  public static final RdmaOption<Integer> LOOP_SEND_BUFFERS = new RdmaOption<>("LOOP_SEND_BUFFERS", Integer.class,
      v -> v >= 128 && v <= 1 << 20, "128 .. 1048576", 16_384);
  /**
   * Connections per loop and device that keep send buffers of their own, as on a
   * thread-per-connection loop, before the loop's send pool serves the rest (default 2; 0: every
   * connection borrows). Such a connection skips the pool's take and give on every message, which
   * an isolated request-response pays on its critical path. What it costs is bounded per loop: at
   * most this many connections' (the largest value in use there) BUFFER_COUNT send buffers,
   * registered as used and kept until the connection closes. Decided once, as the connection
   * opens, counting every endpoint then on the loop's channel, itself included. Receives are
   * unaffected (the loop's shared receive queue where SHARED_RECEIVE_QUEUE gives one).
   */
  public static final RdmaOption<Integer> LOOP_PRIVATE_CONNECTIONS = new RdmaOption<>("LOOP_PRIVATE_CONNECTIONS",
      Integer.class, v -> v >= 0 && v <= 1024, "0 .. 1024", 2);
  /**
   * Raw mode: no framing and no credits, one RDMA SEND per message, every receive buffer posted up
   * front, so that plain librdmacm programs (rdma_client, rdma_server) can be peers. Limits: a
   * message must fit one buffer of the receiver (else the receiver's QP fails), a slow receiver
   * makes the sender retry (RNR) instead of slowing it down, and no private-data handshake checks
   * the peer's settings.
   */
  public static final RdmaOption<Boolean> RAW =
      new RdmaOption<>("RAW", Boolean.class, v -> true, "true or false", false);

  private final String name;
  private final Class<T> type;
  private final Predicate<T> valid;
  private final String range;
  private final T defaultValue;
  private final boolean serverOnly;
  private final UnaryOperator<T> canonical;
  /** The position in {@link #values()}: a config stores its values in an array by it. */
  final int index;

  private RdmaOption(String name, Class<T> type, Predicate<T> valid, String range, T defaultValue) {
    this(name, type, valid, range, defaultValue, false, v -> v);
  }

  private RdmaOption(String name, Class<T> type, Predicate<T> valid, String range, T defaultValue,
      boolean serverOnly, UnaryOperator<T> canonical) {
    this.name = name;
    this.type = type;
    this.valid = valid;
    this.range = range;
    this.defaultValue = defaultValue;
    this.serverOnly = serverOnly;
    this.canonical = canonical;
    this.index = ALL.size();
    ALL.add(this);
  }

  /** Every option, in declaration order. */
  public static List<RdmaOption<?>> values() {
    return List.copyOf(ALL);
  }

  /** The option's name, that of its constant (e.g. {@code BUFFER_SIZE}). */
  public String name() {
    return name;
  }

  /** The type of its values. */
  public Class<T> type() {
    return type;
  }

  /** The valid values, in words (e.g. {@code 1 .. 16384}). */
  public String range() {
    return range;
  }

  /** The value a server or client has unless it sets one. */
  public T defaultValue() {
    return defaultValue;
  }

  /** Whether only servers read this option (a client accepts it and ignores it). */
  public boolean serverOnly() {
    return serverOnly;
  }

  /**
   * Checks {@code value} and returns it in canonical form (a provider name in lower case, say).
   *
   * @throws IllegalArgumentException naming this option and its range, when {@code value} is not
   *     of its type or out of its range
   * @throws NullPointerException when {@code value} is null
   */
  public T validate(Object value) {
    Objects.requireNonNull(value, name);
    if (!type.isInstance(value)) {
      throw new IllegalArgumentException(name + " takes a " + type.getSimpleName() + ", was " + value.getClass().getName());
    }
    T v = canonical.apply(type.cast(value));
    if (!valid.test(v)) {
      throw new IllegalArgumentException(name + " must be " + range + ", was " + v);
    }
    return v;
  }

  @Override
  public String toString() {
    return name;
  }
}
