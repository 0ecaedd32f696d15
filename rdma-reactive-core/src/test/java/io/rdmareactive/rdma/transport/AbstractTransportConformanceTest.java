package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.conformance.LeakCheck;
import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.MessageTooLargeException;
import io.rdmareactive.rdma.RdmaDevices;
import io.rdmareactive.rdma.ResourceClosedException;
import io.rdmareactive.rdma.spi.ConnectionProvider;
import io.rdmareactive.rdma.spi.EndpointOptions;
import io.rdmareactive.rdma.spi.Listener;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

/**
 * The transport's behaviour, provider-neutral: the in-memory provider runs it on the host, the
 * native module subclasses it (tagged {@code native}) to run it over Soft-RoCE. Every test ends
 * with as many live verbs objects as it started with.
 */
public abstract class AbstractTransportConformanceTest {
  protected static final Duration WAIT = Duration.ofSeconds(30);

  private final List<DisposableRdmaServer> servers = new ArrayList<>();
  private final List<RdmaConnection> clients = new ArrayList<>();

  /** The {@link RdmaOption#PROVIDER} value under test. */
  protected abstract String provider();

  /** The address servers bind and clients connect to (an address of an RDMA device for native). */
  protected abstract String host();

  /** Live verbs objects by type; compared before and after each test (empty when unknown). */
  protected abstract Map<String, Integer> liveResources();

  /** Messages each way in the ordering test: lean on slow targets. */
  protected int sequenceLength() {
    return 100_000;
  }

  protected ConnectionProvider connections() {
    return RdmaDevices.provider(provider()).connections();
  }

  protected RdmaServer server() {
    return RdmaServer.create().host(host()).port(0).option(RdmaOption.PROVIDER, provider());
  }

  protected RdmaClient client(DisposableRdmaServer server) {
    return client(server.port());
  }

  protected RdmaClient client(int port) {
    return RdmaClient.create().host(host()).port(port).option(RdmaOption.PROVIDER, provider())
        .connectTimeout(Duration.ofSeconds(10));
  }

  protected DisposableRdmaServer bind(RdmaServer server) {
    DisposableRdmaServer s = server.bindNow();
    servers.add(s);
    return s;
  }

  protected RdmaConnection connect(RdmaClient client) {
    RdmaConnection c = client.connectNow();
    clients.add(c);
    return c;
  }

  @RegisterExtension
  final LeakCheck leakCheck = LeakCheck.settling(this::liveResources, WAIT);

  @AfterEach
  void closeAndCheckNothingLeaked() {
    for (RdmaConnection c : clients) {
      c.dispose();
      c.onDispose().block(WAIT);
    }
    for (DisposableRdmaServer s : servers) {
      s.disposeNow(WAIT);
    }
  }

  private static byte[] random(int size, long seed) {
    byte[] b = new byte[size];
    new Random(seed).nextBytes(b);
    return b;
  }

  private static byte[] number(long n) {
    return ByteBuffer.allocate(8).putLong(n).array();
  }

  // ---- data ---------------------------------------------------------------------------------

  @Test
  void echoesPayloadsFromOneByteToOneMebibyte() {
    DisposableRdmaServer server = bind(server().handle((in, out) -> out.send(in.receive())));
    RdmaConnection c = connect(client(server));
    int[] sizes = {1, 2, 100, 4095, 16 * 1024 - 1, 16 * 1024, 16 * 1024 + 1, 65_536, 300_001, 1 << 20};
    List<byte[]> payloads = new ArrayList<>();
    for (int i = 0; i < sizes.length; i++) {
      payloads.add(random(sizes[i], i));
    }
    Mono<List<byte[]>> echoed = c.inbound().receiveBytes().take(sizes.length).collectList();
    StepVerifier.create(Mono.zip(c.outbound().send(Flux.fromIterable(payloads)).thenReturn(true), echoed)
            .map(t -> t.getT2()))
        .assertNext(got -> {
          assertThat(got).hasSize(sizes.length);
          for (int i = 0; i < sizes.length; i++) {
            assertThat(got.get(i)).as("payload %d of %d bytes", i, sizes[i]).isEqualTo(payloads.get(i));
          }
        })
        .expectComplete()
        .verify(WAIT);
    assertThat(c.statistics().messagesSent()).isEqualTo(sizes.length);
    assertThat(c.statistics().messagesReceived()).isEqualTo(sizes.length);
  }

  @Test
  void anIdleConnectionPinsOneReceiveChunkAndABusyOneGrowsToItsBufferCount() {
    int bufferSize = 16 * 1024;
    int count = 64;
    long oneChunk = (long) Math.max(RegisteredBuffers.MIN_CHUNK_BUFFERS, RegisteredBuffers.CHUNK_BYTES / bufferSize)
        * bufferSize;
    Sinks.One<RdmaConnection> serverSide = Sinks.one();
    DisposableRdmaServer server = bind(server().option(RdmaOption.BUFFER_SIZE, bufferSize)
        .option(RdmaOption.BUFFER_COUNT, count)
        .doOnConnection(serverSide::tryEmitValue)
        .handle((in, out) -> out.send(in.receive())));
    RdmaConnection c = connect(client(server).option(RdmaOption.BUFFER_SIZE, bufferSize)
        .option(RdmaOption.BUFFER_COUNT, count));
    RdmaConnection s = serverSide.asMono().block(WAIT);
    assertThat(c.statistics().registeredBytes()).as("an idle client").isEqualTo(oneChunk);
    assertThat(s.statistics().registeredBytes()).as("an idle server connection").isEqualTo(oneChunk);

    // A burst of messages of a full buffer each, all in flight at once, needs more of both pools.
    int n = 500;
    StepVerifier.create(Mono.zip(c.outbound().send(Flux.range(0, n).map(i -> random(bufferSize, i))).thenReturn(true),
            c.inbound().receiveBytes().take(n).count()).map(t -> t.getT2()))
        .expectNext((long) n)
        .expectComplete()
        .verify(Duration.ofSeconds(60));
    long busy = c.statistics().registeredBytes();
    assertThat(busy).as("a busy client").isGreaterThan(oneChunk).isLessThanOrEqualTo((2L * count + ConnectionOperations.RESERVE) * bufferSize);
  }

  @Test
  void sequencesArriveCompleteAndInOrderBothWays() {
    int n = sequenceLength();
    Sinks.One<Long> serverSaw = Sinks.one();
    DisposableRdmaServer server = bind(server().handle((in, out) -> Mono.when(
        out.send(Flux.range(0, n).map(i -> number(i))),
        checkSequence(in, n).doOnNext(serverSaw::tryEmitValue))));
    RdmaConnection c = connect(client(server));
    StepVerifier.create(Mono.zip(c.outbound().send(Flux.range(0, n).map(i -> number(i))).thenReturn(true),
            checkSequence(c.inbound(), n)).map(t -> t.getT2()))
        .expectNext((long) n)
        .expectComplete()
        .verify(Duration.ofSeconds(60));
    StepVerifier.create(serverSaw.asMono()).expectNext((long) n).expectComplete().verify(WAIT);
    assertThat(c.statistics().receiverNotReady()).isZero();
    assertThat(c.statistics().creditViolations()).isZero();
  }

  /** Counts messages that carry 0, 1, 2, ... in order; fails at the first gap, duplicate or reordering. */
  private static Mono<Long> checkSequence(RdmaInbound in, int n) {
    AtomicLong expected = new AtomicLong();
    return in.receive().take(n).map(m -> {
      try {
        long got = m.asByteBuffer().getLong();
        long want = expected.getAndIncrement();
        if (got != want) {
          throw new AssertionError("expected message " + want + ", got " + got);
        }
        return got;
      } finally {
        m.release();
      }
    }).count();
  }

  @Test
  void aSlowConsumerHoldsTheSenderBack() {
    int n = 300;
    int bufferCount = 8;
    AtomicInteger produced = new AtomicInteger();
    AtomicInteger consumed = new AtomicInteger();
    AtomicInteger maxAhead = new AtomicInteger();
    AtomicReference<RdmaConnection> serverSide = new AtomicReference<>();
    DisposableRdmaServer server = bind(server().option(RdmaOption.BUFFER_COUNT, bufferCount)
        .doOnConnection(serverSide::set)
        .handle((in, out) -> in.receiveBytes()
            .delayElements(Duration.ofMillis(1))
            .doOnNext(b -> {
              consumed.incrementAndGet();
              maxAhead.accumulateAndGet(produced.get() - consumed.get(), Math::max);
            })
            .then()));
    RdmaConnection c = connect(client(server).option(RdmaOption.BUFFER_COUNT, bufferCount));
    StepVerifier.create(c.outbound().send(Flux.range(0, n).doOnNext(i -> produced.incrementAndGet())
            .map(i -> number(i))))
        .expectComplete()
        .verify(WAIT);
    // What may be ahead of the consumer: delayElements' prefetch (32), the receiver's posted buffers
    // and the sender's queue (bufferCount + 2 each), a message in hand. Without flow control all 300 would be.
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (consumed.get() < n && System.nanoTime() < deadline) {
      LockSupport.parkNanos(1_000_000);
    }
    assertThat(consumed.get()).isEqualTo(n);
    assertThat(maxAhead.get()).as("messages produced but not yet consumed, at most").isLessThanOrEqualTo(
        32 + 2 * (bufferCount + ConnectionOperations.RESERVE) + 2);
    RdmaStatistics sender = c.statistics();
    RdmaStatistics receiver = serverSide.get().statistics();
    assertThat(sender.receiverNotReady()).isZero();
    assertThat(receiver.receiverNotReady()).isZero();
    assertThat(sender.creditViolations()).isZero();
    assertThat(sender.creditStalls()).as("a slow consumer makes the sender wait for credits").isPositive();
    assertThat(sender.completionErrors() + receiver.completionErrors()).isZero();
    assertThat(sender.maxSendsInFlight()).isLessThanOrEqualTo(bufferCount + ConnectionOperations.RESERVE);
    assertThat(receiver.creditUpdatesSent()).as("the idle direction grants through credit updates").isPositive();
    // Updates never answer updates forever: far fewer of them than messages.
    assertThat(receiver.creditUpdatesSent() + sender.creditUpdatesSent()).isLessThan(n);
  }

  @Test
  void cancellingMidStreamFreesEverything() {
    DisposableRdmaServer server = bind(server().handle((in, out) ->
        out.send(Flux.<byte[], Long>generate(() -> 0L, (i, sink) -> {
          sink.next(number(i));
          return i + 1;
        }))));
    RdmaClient client = client(server);
    StepVerifier.create(client.connect().flatMapMany(c -> c.inbound().receiveBytes()
            .doFinally(s -> c.dispose())), 0)
        .thenRequest(50)
        .expectNextCount(50)
        .thenCancel()
        .verify(WAIT);
    // closeAndCheckNothingLeaked: the client's connection and, once it noticed, the server's are freed.
  }

  @Test
  void peerDisposeCompletesInboundAndErrorsPendingOutbound() {
    AtomicReference<RdmaConnection> serverSide = new AtomicReference<>();
    DisposableRdmaServer server = bind(server().doOnConnection(serverSide::set)
        .handle((in, out) -> out.sendString(Mono.just("before"))));
    RdmaConnection c = connect(client(server));
    Mono<List<String>> inbound = c.inbound().receiveString().collectList().cache();
    inbound.subscribe();
    long start = System.nanoTime();
    // The server's handler completes after its one message, which disposes its side.
    StepVerifier.create(c.outbound().send(Flux.never()))
        .expectErrorSatisfies(e -> assertReason(e, ConnectionException.Reason.RESET))
        .verify(WAIT);
    StepVerifier.create(inbound).expectNext(List.of("before")).expectComplete().verify(WAIT);
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    StepVerifier.create(c.onDispose()).expectComplete().verify(WAIT);
    StepVerifier.create(serverSide.get().onDispose()).expectComplete().verify(WAIT);
    StepVerifier.create(c.outbound().sendString(Mono.just("after")))
        .expectErrorSatisfies(e -> assertReason(e, ConnectionException.Reason.RESET))
        .verify(WAIT);
  }

  @Test
  void clientDisposeErrorsTheServersPendingOutbound() {
    Sinks.One<Throwable> serverSend = Sinks.one();
    Sinks.Empty<Void> sending = Sinks.empty();
    DisposableRdmaServer server = bind(server().handle((in, out) ->
        out.send(Flux.never().doOnSubscribe(s -> sending.tryEmitEmpty())).doOnError(serverSend::tryEmitValue)));
    RdmaConnection c = connect(client(server));
    StepVerifier.create(sending.asMono()).expectComplete().verify(WAIT);
    c.dispose();
    StepVerifier.create(serverSend.asMono())
        .assertNext(e -> assertReason(e, ConnectionException.Reason.RESET))
        .expectComplete()
        .verify(WAIT);
  }

  @Test
  void cancellingAConnectInProgressFreesEverything() {
    ConnectionProvider cp = connections();
    try (Listener listener = cp.listen(new InetSocketAddress(host(), 0), new EndpointOptions(4, 4, 0, new byte[0]))) {
      StepVerifier.create(client(listener.boundAddress().getPort()).connect())
          .expectSubscription()
          .thenAwait(Duration.ofMillis(100))
          .thenCancel()
          .verify(WAIT);
    }
    // closeAndCheckNothingLeaked: the half-made endpoint and its buffers are gone.
  }

  @Test
  void clientDisposeCompletesTheServersInbound() {
    Sinks.One<Long> serverInbound = Sinks.one();
    DisposableRdmaServer server = bind(server().handle((in, out) ->
        in.receive().doOnNext(RdmaMessage::release).count().doOnNext(serverInbound::tryEmitValue).then()));
    RdmaConnection c = connect(client(server));
    StepVerifier.create(c.outbound().sendString(Flux.just("a", "b", "c"))).expectComplete().verify(WAIT);
    c.dispose();
    StepVerifier.create(serverInbound.asMono()).expectNext(3L).expectComplete().verify(WAIT);
    StepVerifier.create(c.onDispose()).expectComplete().verify(WAIT);
  }

  @Test
  void inboundAcceptsOneSubscriber() {
    DisposableRdmaServer server = bind(server());
    RdmaConnection c = connect(client(server));
    c.inbound().receive().subscribe();
    StepVerifier.create(c.inbound().receive()).expectError(IllegalStateException.class).verify(WAIT);
  }

  // ---- bad input ----------------------------------------------------------------------------

  @Test
  void unresolvableHostFailsWithUnresolved() {
    StepVerifier.create(RdmaClient.create().host("no-such-host.invalid").port(7471)
            .option(RdmaOption.PROVIDER, provider()).connect())
        .expectErrorSatisfies(e -> assertReason(e, ConnectionException.Reason.UNRESOLVED))
        .verify(WAIT);
    StepVerifier.create(RdmaServer.create().host("no-such-host.invalid").option(RdmaOption.PROVIDER, provider())
            .bind())
        .expectErrorSatisfies(e -> assertReason(e, ConnectionException.Reason.UNRESOLVED))
        .verify(WAIT);
  }

  @Test
  void portInUseFailsWithAddressInUse() {
    DisposableRdmaServer first = bind(server());
    StepVerifier.create(server().port(first.port()).bind())
        .expectErrorSatisfies(e -> assertReason(e, ConnectionException.Reason.ADDRESS_IN_USE))
        .verify(WAIT);
  }

  @Test
  void nobodyListeningFailsWithRefused() {
    DisposableRdmaServer gone = server().bindNow();
    int port = gone.port();
    gone.disposeNow(WAIT);
    StepVerifier.create(client(port).connect())
        .expectErrorSatisfies(e -> assertReason(e, ConnectionException.Reason.REFUSED))
        .verify(WAIT);
  }

  @Test
  void aListenerThatNeverAcceptsMakesConnectTimeOut() {
    ConnectionProvider cp = connections();
    InetSocketAddress address = new InetSocketAddress(host(), 0);
    try (Listener listener = cp.listen(address, new EndpointOptions(4, 4, 0, new byte[0]))) {
      long start = System.nanoTime();
      StepVerifier.create(client(listener.boundAddress().getPort()).connectTimeout(Duration.ofMillis(300)).connect())
          .expectErrorSatisfies(e -> assertReason(e, ConnectionException.Reason.TIMED_OUT))
          .verify(WAIT);
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
    }
  }

  @Test
  void aMessageAboveTheMaximumFailsThatSendOnly() {
    DisposableRdmaServer server = bind(server().handle((in, out) -> out.send(in.receive())));
    RdmaConnection c = connect(client(server).option(RdmaOption.MAX_MESSAGE_SIZE, 100_000));
    StepVerifier.create(c.outbound().send(Mono.just(new byte[100_001])))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(MessageTooLargeException.class)
            .hasMessageContaining("100001").hasMessageContaining("100000"))
        .verify(WAIT);
    assertThat(c.statistics().bytesSent()).as("nothing of it was posted").isZero();
    byte[] fits = random(100_000, 7);
    StepVerifier.create(Mono.zip(c.outbound().send(Mono.just(fits)).thenReturn(true),
            c.inbound().receiveBytes().next()).map(t -> t.getT2()))
        .assertNext(b -> assertThat(b).isEqualTo(fits))
        .expectComplete()
        .verify(WAIT);
  }

  /** An {@link OutboundMessage} that records its releases. */
  private static final class CountingMessage implements OutboundMessage {
    final byte[] bytes;
    final AtomicInteger releases = new AtomicInteger();

    CountingMessage(byte[] bytes) {
      this.bytes = bytes;
    }

    @Override
    public int length() {
      return bytes.length;
    }

    @Override
    public void copyTo(long offset, java.lang.foreign.MemorySegment target, long targetOffset, int length) {
      java.lang.foreign.MemorySegment.copy(bytes, (int) offset, target, java.lang.foreign.ValueLayout.JAVA_BYTE,
          targetOffset, length);
    }

    @Override
    public void release() {
      releases.incrementAndGet();
    }
  }

  @Test
  void outboundMessagesCopyThemselvesInWholeOrInFragmentsAndAreReleasedOnce() {
    DisposableRdmaServer server = bind(server().option(RdmaOption.BUFFER_SIZE, 1024)
        .handle((in, out) -> out.send(in.receive())));
    RdmaConnection c = connect(client(server).option(RdmaOption.BUFFER_SIZE, 1024)
        .option(RdmaOption.MAX_MESSAGE_SIZE, 100_000));
    byte[] small = random(100, 1);
    byte[] large = random(10_000, 2); // ten fragments: copyTo at ten offsets
    CountingMessage a = new CountingMessage(small);
    CountingMessage b = new CountingMessage(large);
    StepVerifier.create(Mono.zip(c.outbound().send(Flux.just(a, b)).thenReturn(true),
            c.inbound().receiveBytes().take(2).collectList()).map(t -> t.getT2()))
        .assertNext(l -> assertThat(l).containsExactly(small, large))
        .expectComplete()
        .verify(WAIT);
    assertThat(a.releases).hasValue(1);
    assertThat(b.releases).hasValue(1);
    CountingMessage tooLarge = new CountingMessage(new byte[100_001]);
    StepVerifier.create(c.outbound().send(Mono.just(tooLarge)))
        .expectError(MessageTooLargeException.class)
        .verify(WAIT);
    assertThat(tooLarge.releases).as("dropped: released all the same").hasValue(1);
    assertThat(c.statistics().bytesSent()).isEqualTo(small.length + large.length);
  }

  @Test
  void anItemOfAnUnsupportedTypeFailsThatSend() {
    DisposableRdmaServer server = bind(server());
    RdmaConnection c = connect(client(server));
    StepVerifier.create(c.outbound().send(Mono.just(42)))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("java.lang.Integer"))
        .verify(WAIT);
  }

  @Test
  void useAfterDisposeFailsWithResourceClosed() {
    DisposableRdmaServer server = bind(server());
    RdmaConnection c = connect(client(server));
    c.dispose();
    StepVerifier.create(c.onDispose()).expectComplete().verify(WAIT);
    assertThat(c.isDisposed()).isTrue();
    StepVerifier.create(c.outbound().sendString(Mono.just("late")))
        .expectError(ResourceClosedException.class).verify(WAIT);
    StepVerifier.create(c.inbound().receive()).expectError(ResourceClosedException.class).verify(WAIT);
  }

  @Test
  void invalidOptionsAreRejectedNamingTheOption() {
    assertThatThrownBy(() -> RdmaClient.create().option(RdmaOption.BUFFER_SIZE, 10))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("BUFFER_SIZE");
    assertThatThrownBy(() -> RdmaServer.create().option(RdmaOption.BUFFER_COUNT, 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("BUFFER_COUNT");
    assertThatThrownBy(() -> RdmaServer.create().port(70_000))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("port");
    assertThatThrownBy(() -> RdmaClient.create().option(RdmaOption.PROVIDER, "bogus"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PROVIDER");
    assertThatThrownBy(() -> RdmaServer.create().option(RdmaOption.MAX_MESSAGE_SIZE, Integer.MAX_VALUE))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("MAX_MESSAGE_SIZE must be 1 .. 268435456");
    assertThatThrownBy(() -> RdmaServer.create().option(RdmaOption.MAX_CONNECTIONS, 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("MAX_CONNECTIONS");
    assertThatThrownBy(() -> RdmaServer.create().option(RdmaOption.HANDSHAKE_TIMEOUT, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("HANDSHAKE_TIMEOUT");
    assertThatThrownBy(() -> RdmaServer.create().option(RdmaOption.CLOSE_TIMEOUT, Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("CLOSE_TIMEOUT");
    assertThatThrownBy(() -> RdmaClient.create().option(RdmaOption.RNR_RETRY, 8))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("RNR_RETRY must be 0 .. 7");
    assertThatThrownBy(() -> RdmaClient.create().option(RdmaOption.RETRY_COUNT, -1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("RETRY_COUNT");
    assertThatThrownBy(() -> new EndpointOptions(1, 1, 0, new byte[0]).withRetries(7, 8))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("0 .. 7");
  }

  @Test
  void aFramedClientRefusesARawServer() {
    DisposableRdmaServer server = bind(server().option(RdmaOption.RAW, true));
    StepVerifier.create(client(server).connect())
        .expectErrorSatisfies(e -> assertReason(e, ConnectionException.Reason.REFUSED))
        .verify(WAIT);
  }

  // ---- raw mode -----------------------------------------------------------------------------

  @Test
  void rawModeEchoesOneSendPerMessage() {
    DisposableRdmaServer server = bind(server().option(RdmaOption.RAW, true).option(RdmaOption.BUFFER_SIZE, 4096)
        .handle((in, out) -> out.send(in.receive())));
    RdmaConnection c = connect(client(server).option(RdmaOption.RAW, true).option(RdmaOption.BUFFER_SIZE, 4096));
    List<String> words = List.of("rdma", "", "x".repeat(4096));
    StepVerifier.create(Mono.zip(c.outbound().sendString(Flux.fromIterable(words)).thenReturn(true),
            c.inbound().receiveString().take(words.size()).collectList()).map(t -> t.getT2()))
        .expectNext(words)
        .expectComplete()
        .verify(WAIT);
    StepVerifier.create(c.outbound().send(Mono.just(new byte[4097])))
        .expectError(MessageTooLargeException.class).verify(WAIT);
    assertThat(c.statistics().creditUpdatesSent()).isZero();
  }

  private static void assertReason(Throwable e, ConnectionException.Reason reason) {
    assertThat(e).isInstanceOf(ConnectionException.class);
    assertThat(((ConnectionException) e).reason()).as("reason of %s", e).isEqualTo(reason);
  }

  static String utf8(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }

  @Test
  void connectionHooksComposeInsteadOfReplacing() {
    var calls = new java.util.concurrent.CopyOnWriteArrayList<String>();
    DisposableRdmaServer server = bind(server()
        .doOnConnection(c -> calls.add("server-connected-1")).doOnConnection(c -> calls.add("server-connected-2"))
        .handle((in, out) -> out.send(in.receive())));
    RdmaConnection conn = client(server)
        .doOnConnected(c -> calls.add("client-connected-1")).doOnConnected(c -> calls.add("client-connected-2"))
        .doOnDisconnected(c -> calls.add("client-disconnected-1")).doOnDisconnected(c -> calls.add("client-disconnected-2"))
        .connectNow();
    StepVerifier.create(conn.outbound().sendString(Mono.just("hi")).thenMany(conn.inbound().receiveString().take(1)))
        .expectNext("hi").verifyComplete();
    conn.dispose();
    StepVerifier.create(conn.onDispose()).verifyComplete();
    assertThat(calls).containsSubsequence("client-connected-1", "client-connected-2")
        .containsSubsequence("client-disconnected-1", "client-disconnected-2")
        .contains("server-connected-1", "server-connected-2");
  }

  // ---- loops ----------------------------------------------------------------------------------

  /** Connections in the loop tests: many, but lean on slow targets. */
  protected int loopConnections() {
    return 200;
  }

  /** Connections in the scale test (the acceptance: 10,000 in memory, 1,000 on rxe). */
  protected int scaleConnections() {
    return 1_000;
  }

  @Test
  void manyConnectionsShareTwoEventLoops() {
    echoOnLoops(RdmaLoopResources.create("conf-event", 2), "conf-event-");
  }

  @Test
  void atScaleThreadsStayAtTheLoopCount() {
    long before = Thread.activeCount();
    int peak = echoOnLoops(RdmaLoopResources.create("conf-scale", 4), "conf-scale-", scaleConnections());
    assertThat(peak - before).as("threads added at peak with %d connections", scaleConnections())
        .isLessThanOrEqualTo(4 + 32); // the loops, plus Reactor's bounded-elastic workers for connects
  }

  @Test
  void manyConnectionsShareTwoBusyPollingLoops() {
    echoOnLoops(RdmaLoopResources.busyPoll("conf-spin", 2, io.rdmareactive.rdma.verbs.IdleStrategy.backoff()),
        "conf-spin-");
  }

  @Test
  void eventLoopsWithoutPollBudgetSleepAfterEachCompletion() {
    echoOnLoops(RdmaLoopResources.create("conf-nobudget", 1, Duration.ZERO), "conf-nobudget-");
  }

  /**
   * N clients and their server connections on {@code loops}: each echoes and checks messages;
   * completions run on the loops' threads only, their number stays at most the loop count
   * whatever N, and when all are closed the loops hold no channel and their threads end.
   */
  private void echoOnLoops(RdmaLoopResources loops, String threadPrefix) {
    echoOnLoops(loops, threadPrefix, loopConnections());
  }

  /** Returns the JVM's thread count at its peak (all connections open and echoing). */
  private int echoOnLoops(RdmaLoopResources loops, String threadPrefix, int n) {
    long t0 = System.nanoTime();
    java.util.Set<String> serverThreads = java.util.concurrent.ConcurrentHashMap.newKeySet();
    DisposableRdmaServer server = bind(server().runOn(loops).option(RdmaOption.BUFFER_COUNT, 4)
        .option(RdmaOption.BUFFER_SIZE, 1024)
        .handle((in, out) -> out.send(in.receive().doOnNext(m -> serverThreads.add(Thread.currentThread().getName())))));
    RdmaClient client = client(server).runOn(loops).option(RdmaOption.BUFFER_COUNT, 4)
        .option(RdmaOption.BUFFER_SIZE, 1024).connectTimeout(Duration.ofSeconds(60)); // TCG, spinning loops
    List<RdmaConnection> conns = Flux.range(0, n).flatMap(i -> client.connect(), 16).collectList().block(WAIT.multipliedBy(4));
    assertThat(conns).hasSize(n);
    clients.addAll(conns);
    assertThat(loopThreads(threadPrefix)).as("loop threads with %d connections among %s", n, Thread.getAllStackTraces().keySet().stream().map(Thread::getName).sorted().toList()).isBetween(1L, (long) loops.loopCount());
    Flux.fromIterable(conns).index().flatMap(t -> {
      RdmaConnection c = t.getT2();
      List<String> sent = List.of("a" + t.getT1(), "b" + t.getT1(), "c" + t.getT1());
      return c.outbound().sendString(Flux.fromIterable(sent)).then()
          .and(c.inbound().receiveString().take(3).collectList().doOnNext(got -> assertThat(got).isEqualTo(sent)));
    }, 32).then().block(WAIT.multipliedBy(4));
    // Everything runs on the loops, also the drain that a request from the handler's
    // bounded-elastic thread starts: it is handed to the connection's loop.
    assertThat(serverThreads).isNotEmpty().allMatch(name -> name.startsWith(threadPrefix), "a loop thread");
    int peak = Thread.activeCount();
    long giveUps = ConnectionCloser.FLUSH_GIVE_UPS.get();
    long t1 = System.nanoTime();
    for (RdmaConnection c : conns) {
      c.dispose();
    }
    Flux.fromIterable(conns).flatMap(RdmaConnection::onDispose).then().block(WAIT.multipliedBy(4));
    clients.removeAll(conns);
    server.disposeNow(WAIT);
    servers.remove(server);
    // Every close saw all its flush completions: none waited out the flush bound. (Closing 1,000
    // at once on rxe did, while closing shared arenas kept the loops from reading their CQs.)
    assertThat(ConnectionCloser.FLUSH_GIVE_UPS.get() - giveUps).as("closes that gave up on flush completions")
        .isZero();
    StepVerifier.create(loops.disposeLater()).verifyComplete();
    assertThat(loops.channelCount()).isZero();
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (loopThreads(threadPrefix) > 0 && System.nanoTime() < deadline) {
      LockSupport.parkNanos(10_000_000);
    }
    assertThat(loopThreads(threadPrefix)).as("loop threads after every connection closed").isZero();
    assertThatThrownBy(() -> client.connectNow()).hasMessageContaining("disposed");
    System.out.printf("%s: %d connections on %s: connect+echo %d ms, close %d ms, %d threads at peak%n", provider(), n,
        loops, (t1 - t0) / 1_000_000, (System.nanoTime() - t1) / 1_000_000, peak);
    return peak;
  }

  private static long loopThreads(String prefix) {
    return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(prefix)).count();
  }

  // ---- limits -------------------------------------------------------------------------------

  @Test
  void aServerAtItsConnectionLimitRefusesAndSaysWhy() {
    DisposableRdmaServer server = bind(server().option(RdmaOption.MAX_CONNECTIONS, 2)
        .handle((in, out) -> out.send(in.receive())));
    RdmaConnection a = connect(client(server));
    connect(client(server));
    StepVerifier.create(client(server).connect())
        .expectErrorSatisfies(e -> {
          assertReason(e, ConnectionException.Reason.REFUSED);
          assertThat(e).hasMessageContaining("MAX_CONNECTIONS");
        })
        .verify(WAIT);
    a.dispose();
    StepVerifier.create(a.onDispose()).verifyComplete();
    // Once the server has freed a's side, there is room again.
    RdmaConnection c = connectOnceThereIsRoom(server);
    StepVerifier.create(c.outbound().sendString(Mono.just("room")).thenMany(c.inbound().receiveString().take(1)))
        .expectNext("room").verifyComplete();
  }

  @Test
  void aConnectRequestWithoutHelloIsRefusedAndSaysWhy() {
    DisposableRdmaServer server = bind(server().handle((in, out) -> out.send(in.receive())));
    ConnectionProvider cp = connections();
    var endpoint = cp.connect(new InetSocketAddress(host(), server.port()), new EndpointOptions(4, 4, 0, new byte[0]),
        WAIT).block(WAIT);
    try {
      StepVerifier.create(endpoint.establish())
          .expectErrorSatisfies(e -> assertReason(e, ConnectionException.Reason.REFUSED))
          .verify(WAIT);
      assertThat(Protocol.Reject.decode(endpoint.remotePrivateData())).isEqualTo(Protocol.Reject.BAD_HELLO);
    } finally {
      endpoint.close();
    }
    RdmaConnection good = connect(client(server));
    StepVerifier.create(good.outbound().sendString(Mono.just("still")).thenMany(good.inbound().receiveString().take(1)))
        .expectNext("still").verifyComplete();
  }

  @Test
  void connectRequestsBeyondThePendingHandshakeLimitAreRefusedAndTheServerKeepsServing() {
    DisposableRdmaServer server = bind(server().option(RdmaOption.MAX_PENDING_HANDSHAKES, 1)
        .option(RdmaOption.BUFFER_COUNT, 4).handle((in, out) -> out.send(in.receive())));
    AtomicInteger refused = new AtomicInteger();
    List<RdmaConnection> made = Flux.range(0, 16)
        .flatMap(i -> client(server).option(RdmaOption.BUFFER_COUNT, 4).connect()
            .onErrorResume(e -> {
              assertReason(e, ConnectionException.Reason.REFUSED);
              assertThat(e).hasMessageContaining("MAX_PENDING_HANDSHAKES");
              refused.incrementAndGet();
              return Mono.empty();
            }), 16)
        .collectList().block(WAIT);
    clients.addAll(made);
    assertThat(made.size() + refused.get()).isEqualTo(16);
    assertThat(made).isNotEmpty();
    RdmaConnection good = connectOnceThereIsRoom(server);
    StepVerifier.create(good.outbound().sendString(Mono.just("served")).thenMany(good.inbound().receiveString().take(1)))
        .expectNext("served").verifyComplete();
  }

  /** Connect attempts racing a server's dispose; fewer on slow targets. */
  protected int raceConnections() {
    return 64;
  }

  /**
   * Many connects race the server's dispose: each attempt either fails or yields a connection
   * that the dispose ends (the client sees the disconnect without disposing it), every connection
   * the server made is disposed, and the verbs objects return to their baseline (checked after
   * each test), so no connection escapes the dispose.
   */
  @Test
  void connectsRacingTheServersDisposeLeaveNoConnectionBehind() {
    int n = raceConnections();
    List<RdmaConnection> served = new java.util.concurrent.CopyOnWriteArrayList<>();
    Sinks.Empty<Void> firstServed = Sinks.empty();
    DisposableRdmaServer server = bind(server().option(RdmaOption.BUFFER_COUNT, 4)
        .option(RdmaOption.MAX_PENDING_HANDSHAKES, n)
        .doOnConnection(c -> {
          served.add(c);
          firstServed.tryEmitEmpty();
        })
        .handle((in, out) -> out.send(in.receive())));
    List<RdmaConnection> made = new java.util.concurrent.CopyOnWriteArrayList<>();
    AtomicInteger failed = new AtomicInteger();
    Mono<Void> racing = Flux.range(0, n)
        .flatMap(i -> client(server).option(RdmaOption.BUFFER_COUNT, 4).connect()
            .doOnNext(made::add)
            .onErrorResume(e -> {
              failed.incrementAndGet();
              return Mono.empty();
            }), n)
        .then()
        .cache();
    racing.subscribe();
    StepVerifier.create(firstServed.asMono()).expectComplete().verify(WAIT);
    server.disposeNow(WAIT);
    StepVerifier.create(racing).expectComplete().verify(WAIT);
    clients.addAll(made);
    assertThat(made.size() + failed.get()).as("every attempt ended").isEqualTo(n);
    assertThat(made).as("at least the first connection was made").isNotEmpty();
    for (RdmaConnection c : made) {
      StepVerifier.create(c.onDispose()).as("a client connection the dispose should have ended")
          .expectComplete().verify(WAIT);
    }
    assertThat(served).as("server connections").allMatch(RdmaConnection::isDisposed);
    StepVerifier.create(server.onDispose()).expectComplete().verify(WAIT);
  }

  /** Connects, retrying while the server refuses (it frees a closed connection's side asynchronously). */
  private RdmaConnection connectOnceThereIsRoom(DisposableRdmaServer server) {
    RdmaConnection c = Mono.defer(() -> client(server).connect())
        .retryWhen(reactor.util.retry.Retry.fixedDelay(100, Duration.ofMillis(100))
            .filter(e -> e instanceof ConnectionException ce && ce.reason() == ConnectionException.Reason.REFUSED))
        .block(WAIT);
    clients.add(c);
    return c;
  }

  // ---- deadlines ----------------------------------------------------------------------------

  /** Whether the provider retries a SEND the receiver is not ready for (RNR), as hardware does. */
  protected boolean retriesReceiverNotReady() {
    return false;
  }

  /**
   * A peer that promises buffers and never posts a receive, against a server that sends to it
   * with RNR retries set to forever: the server's dispose still ends within the close timeout
   * (plus the flush), and the handler's send fails with TIMED_OUT. Where the provider has no RNR
   * retry, the send fails at once (RESET) and the dispose is prompt anyway.
   */
  @Test
  void aPeerThatNeverPostsReceivesCannotHoldTheServersDisposePastTheCloseTimeout() {
    Duration closeTimeout = Duration.ofSeconds(2);
    Sinks.One<Throwable> sendFailed = Sinks.one();
    Sinks.Empty<Void> sending = Sinks.empty();
    DisposableRdmaServer server = bind(server().option(RdmaOption.CLOSE_TIMEOUT, closeTimeout)
        .option(RdmaOption.RNR_RETRY, 7)
        .handle((in, out) -> out.sendString(Flux.range(0, 10).map(i -> "to a peer that never reads " + i)
                .doOnSubscribe(s -> sending.tryEmitEmpty()))
            .then().doOnError(sendFailed::tryEmitValue).onErrorResume(e -> Mono.empty())));
    try (RoguePeer rogue = RoguePeer.connect(connections(), new InetSocketAddress(host(), server.port()), 8, 0,
        WAIT)) {
      StepVerifier.create(sending.asMono()).expectComplete().verify(WAIT);
      long start = System.nanoTime();
      server.disposeNow(WAIT);
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      StepVerifier.create(sendFailed.asMono())
          .assertNext(e -> assertReason(e, retriesReceiverNotReady() ? ConnectionException.Reason.TIMED_OUT
              : ConnectionException.Reason.RESET))
          .expectComplete()
          .verify(WAIT);
      if (retriesReceiverNotReady()) {
        assertThat(took).as("dispose waited for the close timeout, then went on")
            .isGreaterThanOrEqualTo(closeTimeout.minusMillis(200)).isLessThan(WAIT);
      }
    }
  }

  /**
   * Every close schedules its flush deadline (and may retry freeing): that work goes to the
   * connection's loop, never to a Reactor scheduler such as parallel, and the close completes
   * there or on the caller, not on a parallel-* thread.
   */
  @Test
  void closeTimersRunOnTheConnectionsLoopNotOnReactorSchedulers() {
    List<String> scheduledByTransport = new java.util.concurrent.CopyOnWriteArrayList<>();
    List<String> closedOn = new java.util.concurrent.CopyOnWriteArrayList<>();
    reactor.core.scheduler.Schedulers.onScheduleHook("close-timers", task -> {
      for (StackTraceElement e : new Throwable().getStackTrace()) {
        if (e.getClassName().startsWith(ConnectionCloser.class.getName())
            || e.getClassName().startsWith(ConnectionOperations.class.getName())) { // the connection engine
          scheduledByTransport.add(Thread.currentThread().getName() + " at " + e);
          break;
        }
      }
      return task;
    });
    try {
      DisposableRdmaServer server = bind(server().handle((in, out) -> out.send(in.receive())));
      for (int i = 0; i < 5; i++) {
        RdmaConnection c = client(server).connectNow();
        StepVerifier.create(c.outbound().sendString(Mono.just("x" + i)).thenMany(c.inbound().receiveString().take(1)))
            .expectNext("x" + i).verifyComplete();
        c.onDispose().doOnSuccess(v -> closedOn.add(Thread.currentThread().getName())).subscribe();
        c.dispose();
        c.onDispose().block(WAIT);
      }
    } finally {
      reactor.core.scheduler.Schedulers.resetOnScheduleHook("close-timers");
    }
    assertThat(scheduledByTransport).as("transport work scheduled on a Reactor scheduler").isEmpty();
    assertThat(closedOn).hasSize(5).noneMatch(name -> name.startsWith("parallel-"));
  }

  // ---- keepalive ------------------------------------------------------------------------------

  /** The keepalive interval of the keepalive tests; slow providers may want a longer one. */
  protected Duration keepaliveInterval() {
    return Duration.ofMillis(200);
  }

  /**
   * A peer that vanishes without a disconnect (its QP in ERROR, as a dead host or path looks)
   * leaves an idle connection that only a keepalive can find dead: the victim sends nothing and
   * reads nothing, yet its connection fails with a RESET that names the keepalive, and is freed.
   */
  @Test
  void anIdleConnectionWhosePeerVanishedFailsByItsKeepalive() {
    Sinks.One<Throwable> victimSaw = Sinks.one();
    Sinks.Empty<Void> subscribed = Sinks.empty();
    AtomicReference<RdmaConnection> victim = new AtomicReference<>();
    // The probe's retries are the connecting side's RETRY_COUNT (the rogue's 3): an accepting QP
    // takes its count from the connect request. At 7 rxe would retry forever.
    DisposableRdmaServer server = bind(server().option(RdmaOption.KEEPALIVE_INTERVAL, keepaliveInterval())
        .doOnConnection(victim::set)
        .handle((in, out) -> {
          // No demand: no credit update goes to the peer, so only a probe can find it gone.
          in.receive().subscribe(new reactor.core.publisher.BaseSubscriber<RdmaMessage>() {
            @Override
            protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
              subscribed.tryEmitEmpty();
            }

            @Override
            protected void hookOnError(Throwable e) {
              victimSaw.tryEmitValue(e);
            }
          });
          return Mono.never();
        }));
    try (RoguePeer rogue = RoguePeer.connect(connections(), new InetSocketAddress(host(), server.port()), 8, WAIT)) {
      StepVerifier.create(subscribed.asMono()).expectComplete().verify(WAIT);
      rogue.vanish();
      long start = System.nanoTime();
      try {
        StepVerifier.create(victimSaw.asMono())
            .assertNext(e -> {
              assertReason(e, ConnectionException.Reason.RESET);
              assertThat(e).hasMessageContaining("keepalive");
            })
            .expectComplete()
            .verify(WAIT);
      } catch (AssertionError e) {
        throw new AssertionError(e.getMessage() + "; the victim's statistics: " + victim.get().statistics(), e);
      }
      System.out.println("keepalive: a vanished peer noticed after "
          + Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms (interval " + keepaliveInterval() + ")");
      StepVerifier.create(victim.get().onDispose()).expectComplete().verify(WAIT);
    }
    RdmaConnection good = connect(client(server));
    StepVerifier.create(good.outbound().sendString(Mono.just("fine")).then()).expectComplete().verify(WAIT);
  }

  /**
   * Keepalives on both ends of a connection idle for many intervals cost nothing visible: no
   * error, no message, no protocol violation, and it still echoes afterwards.
   */
  @Test
  void keepalivesKeepAnIdleConnectionToALivePeerUp() {
    DisposableRdmaServer server = bind(server().option(RdmaOption.KEEPALIVE_INTERVAL, keepaliveInterval())
        .handle((in, out) -> out.send(in.receive())));
    RdmaConnection c = connect(client(server).option(RdmaOption.KEEPALIVE_INTERVAL, keepaliveInterval()));
    StepVerifier.create(c.outbound().sendString(Mono.just("before")).thenMany(c.inbound().receiveString().take(2)))
        .expectNext("before")
        .thenAwait(keepaliveInterval().multipliedBy(6))
        .then(() -> {
          assertThat(c.isDisposed()).as("disposed while idle with keepalives").isFalse();
          c.outbound().sendString(Mono.just("after")).subscribe();
        })
        .expectNext("after")
        .expectComplete()
        .verify(WAIT);
    assertThat(c.statistics().creditViolations()).isZero();
    assertThat(c.statistics().messagesReceived()).as("the probes are no messages").isEqualTo(2);
  }

  // ---- a peer that breaks the protocol --------------------------------------------------------

  @Test
  void aPeerGrantingMoreCreditsThanItHasBuffersLosesItsConnectionOnly() {
    rogueBreaksTheProtocol(rogue -> rogue.send(Protocol.immediate(0xFFFF, false, false), 8), "more than the");
  }

  @Test
  void aPeerSendingReservedHeaderBitsLosesItsConnectionOnly() {
    rogueBreaksTheProtocol(rogue -> rogue.send(1 << 30, 8), "without a valid rdma-reactive header");
  }

  @Test
  void aPeerSendingACreditUpdateWithAPayloadLosesItsConnectionOnly() {
    rogueBreaksTheProtocol(rogue -> rogue.send(Protocol.immediate(0, false, true), 100), "credit update with a payload");
  }

  @Test
  void aPeerSendingAMessageAboveTheMaximumLosesItsConnectionOnly() {
    // Fragments of 4 KiB against a maximum of 8 KiB: the third breaks it (or, should the victim
    // not yet have announced the receives it posted, the credits do).
    rogueBreaksTheProtocol(rogue -> {
      for (int i = 0; i < 4; i++) {
        rogue.send(Protocol.immediate(0, true, false), RoguePeer.BUFFER);
      }
    }, "");
  }

  /**
   * A rogue peer connects to a server whose handler reads, breaks the protocol as {@code act}
   * does, and must lose its connection with a typed error that names the violation; the server
   * counts it and still serves a good client; nothing leaks (checked after each test).
   */
  private void rogueBreaksTheProtocol(java.util.function.Consumer<RoguePeer> act, String violation) {
    Sinks.One<Throwable> victimSaw = Sinks.one();
    Sinks.Empty<Void> reading = Sinks.empty();
    AtomicReference<RdmaConnection> victim = new AtomicReference<>();
    DisposableRdmaServer server = bind(server().option(RdmaOption.MAX_MESSAGE_SIZE, 8192)
        .doOnConnection(victim::set)
        .handle((in, out) -> in.receive().doOnSubscribe(s -> reading.tryEmitEmpty()).doOnNext(RdmaMessage::release)
            .doOnError(victimSaw::tryEmitValue).onErrorResume(e -> Mono.empty()).then()));
    try (RoguePeer rogue = RoguePeer.connect(connections(), new InetSocketAddress(host(), server.port()), 8, WAIT)) {
      // Misbehave once the victim's handler reads: its receive() then carries the typed error.
      StepVerifier.create(reading.asMono()).expectComplete().verify(WAIT);
      // ... and has posted receives for its demand and granted them: otherwise the rogue's sends
      // beyond the reserve could meet "receiver not ready" instead of the check under test.
      long deadline = System.nanoTime() + WAIT.toNanos();
      while (victim.get().statistics().creditUpdatesSent() == 0 && System.nanoTime() < deadline) {
        LockSupport.parkNanos(1_000_000);
      }
      act.accept(rogue);
      StepVerifier.create(victimSaw.asMono())
          .assertNext(e -> assertThat(e).isInstanceOf(io.rdmareactive.rdma.ProtocolViolationException.class)
              .hasMessageContaining("broke the protocol").hasMessageContaining(violation))
          .expectComplete()
          .verify(WAIT);
      StepVerifier.create(victim.get().onDispose()).expectComplete().verify(WAIT);
      assertThat(victim.get().statistics().creditViolations()).isEqualTo(1);
    }
    RdmaConnection good = connect(client(server));
    StepVerifier.create(good.outbound().sendString(Mono.just("fine")).then()).expectComplete().verify(WAIT);
  }

  // ---- a rogue peer's cost to the victim's heap -----------------------------------------------

  /** Rogue messages in the heap tests: the 10^5 (RDMA_ROGUE_MESSAGES overrides); slow targets may send fewer. */
  protected long rogueMessages() {
    return io.rdmareactive.rdma.conformance.TestSettings.rogueMessages(100_000);
  }

  /** How long a rogue waits for a credit before it counts itself stalled (a patience, not a check). */
  protected Duration rogueStall() {
    return Duration.ofSeconds(1);
  }

  /**
   * The heap in use after a full GC, the least of a few samples: the loops and the test's own
   * threads allocate meanwhile, and the least is the closest to what is retained.
   */
  private static long retainedHeap() {
    java.lang.management.MemoryMXBean memory = java.lang.management.ManagementFactory.getMemoryMXBean();
    long least = Long.MAX_VALUE;
    for (int i = 0; i < 5; i++) {
      System.gc();
      least = Math.min(least, memory.getHeapMemoryUsage().getUsed());
    }
    return least;
  }

  private static final long MiB = 1 << 20;

  @Test
  void aPeerFloodingAHandlerThatNeverRequestsStallsOnCreditsAndTheHeapStaysBounded() {
    floodAHandlerThatNeverRequests(1);
  }

  @Test
  void aPeerFloodingFragmentedMessagesAtAHandlerThatNeverRequestsStallsOnCreditsAndTheHeapStaysBounded() {
    floodAHandlerThatNeverRequests(4);
  }

  /**
   * A rogue that keeps to its credits to the letter (using the last one too) tries {@link
   * #rogueMessages()} messages of {@code fragments} SENDs at a handler that subscribed and never
   * requests: the victim holds at most its receive buffers' worth of messages, stops granting, the
   * rogue stalls, and the retained heap does not grow with what it tried to send.
   */
  private void floodAHandlerThatNeverRequests(int fragments) {
    int bufferCount = 8;
    long n = rogueMessages();
    Sinks.Empty<Void> subscribed = Sinks.empty();
    AtomicReference<RdmaConnection> victim = new AtomicReference<>();
    DisposableRdmaServer server = bind(server().option(RdmaOption.BUFFER_COUNT, bufferCount)
        .doOnConnection(victim::set)
        .handle((in, out) -> {
          in.receive().subscribe(new reactor.core.publisher.BaseSubscriber<RdmaMessage>() {
            @Override
            protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
              subscribed.tryEmitEmpty(); // and no request, ever
            }
          });
          return Mono.never();
        }));
    long sends;
    long before;
    long after;
    try (RoguePeer rogue = RoguePeer.connect(connections(), new InetSocketAddress(host(), server.port()), 8, WAIT)) {
      StepVerifier.create(subscribed.asMono()).expectComplete().verify(WAIT);
      before = retainedHeap();
      sends = rogue.sendWithinCredits(n, fragments, RoguePeer.BUFFER, rogueStall());
      after = retainedHeap();
      RdmaStatistics s = victim.get().statistics();
      System.out.printf("%s: a rogue tried %d messages of %d x %d B at a handler that never requests: %d SENDs let in,"
          + " %d messages held, retained heap %+d KiB%n", provider(), n, fragments, RoguePeer.BUFFER, sends,
          s.messagesReceived(), (after - before) / 1024);
      // Whole messages wait for the subscriber; a fragmented one's pieces are in its reassembly.
      long held = bufferCount + ConnectionOperations.RESERVE;
      assertThat(s.messagesReceived()).as("messages the victim holds for a subscriber without demand")
          .isLessThanOrEqualTo(held);
      assertThat(sends).as("SENDs the victim let in of the %d x %d it was offered", n, fragments)
          .isLessThanOrEqualTo((held + 1) * fragments);
      assertThat(s.creditViolations()).as("the rogue kept to its credits").isZero();
    }
    long offered = n * fragments * RoguePeer.BUFFER;
    assertThat(after - before).as("retained heap growth, where keeping the %d messages offered would cost %d MiB",
        n, offered / MiB).isLessThan(4 * MiB);
    StepVerifier.create(victim.get().onDispose()).expectComplete().verify(WAIT);
    RdmaConnection good = connect(client(server));
    StepVerifier.create(good.outbound().sendString(Mono.just("fine")).then()).expectComplete().verify(WAIT);
  }

  /**
   * Rogues connect one after another to one server, each sends messages within its credits, then
   * breaks a rule (in turn: grants beyond its buffers, reserved header bits, a credit update with
   * a payload, a message above the maximum, or the first fragments of a message and then goodbye),
   * until {@link #rogueMessages()} messages went in all. Each rule break fails that connection
   * with a ProtocolViolationException, the one that stops mid-message just ends; the retained
   * heap after all of them is what it was after a tenth of them (nothing per connection stays),
   * verbs objects return to their baseline (checked after each test), and a good client is served.
   */
  @Test
  void roguesBreakingTheProtocolConnectionAfterConnectionLeaveNothingBehind() {
    int maxMessage = 4 * RoguePeer.BUFFER;
    int perConnection = 100;
    long n = rogueMessages();
    long rogues = Math.max(10, n / (perConnection + 1));
    java.util.concurrent.BlockingQueue<Object> ends = new java.util.concurrent.LinkedBlockingQueue<>();
    DisposableRdmaServer server = bind(server().option(RdmaOption.MAX_MESSAGE_SIZE, maxMessage)
        .option(RdmaOption.BUFFER_COUNT, 8)
        .handle((in, out) -> in.receive().doOnNext(RdmaMessage::release).then()
            .doOnSuccess(v -> ends.add("completed")).doOnError(ends::add).onErrorResume(e -> Mono.empty())));
    InetSocketAddress address = new InetSocketAddress(host(), server.port());
    long messages = 0;
    long tenth = 0;
    int violations = 0;
    int midMessage = 0;
    for (long r = 0; r < rogues; r++) {
      if (r == rogues / 10) {
        tenth = retainedHeap();
      }
      int rule = (int) (r % 5);
      try (RoguePeer rogue = RoguePeer.connect(connections(), address, 8, WAIT)) {
        assertThat(rogue.sendWithinCredits(perConnection, 1, 64, WAIT)).as("messages a reading victim let in")
            .isEqualTo(perConnection);
        messages += perConnection + 1;
        switch (rule) {
          case 0 -> assertThat(rogue.sendOnACredit(Protocol.immediate(0xFFFF, false, false), 8, WAIT)).isTrue();
          case 1 -> assertThat(rogue.sendOnACredit(1 << 30, 8, WAIT)).isTrue();
          case 2 -> assertThat(rogue.sendOnACredit(Protocol.immediate(0, false, true), 100, WAIT)).isTrue();
          case 3 -> rogue.sendWithinCredits(1, maxMessage / RoguePeer.BUFFER + 1, RoguePeer.BUFFER, WAIT);
          default -> rogue.sendFirstFragmentsWithinCredits(maxMessage / RoguePeer.BUFFER - 1, RoguePeer.BUFFER, WAIT);
        }
        if (rule < 4) {
          violations++;
          Object end = poll(ends);
          assertThat(end).as("how rogue %d (rule %d) ended: %s", r, rule, end instanceof Throwable t && t.getCause() != null ? t.getCause().getMessage() : "")
              .isInstanceOf(io.rdmareactive.rdma.ProtocolViolationException.class);
          assertThat((Throwable) end).hasMessageContaining("broke the protocol");
        }
      }
      if (rule == 4) {
        // It went away mid-message: the victim drops the pieces it holds and says so with a RESET
        // (or one for its credit update to the rogue, should that have gone first), not a clean end.
        Object end = poll(ends);
        assertThat(end).as("how rogue %d (stopped mid-message) ended", r).isInstanceOf(ConnectionException.class);
        assertReason((Throwable) end, ConnectionException.Reason.RESET);
        midMessage += ((Throwable) end).getMessage().contains("in the middle of a message") ? 1 : 0;
      }
    }
    long all = retainedHeap();
    long perRogue = 3L * RoguePeer.BUFFER; // the pieces each fifth rogue left in its reassembly, at least
    System.out.printf("%s: %d rogues, %d messages, %d rule breaks, %d of %d stopped mid-message seen as such: retained"
        + " heap after a tenth %d KiB, after all %d KiB (%+d KiB)%n", provider(), rogues, messages, violations,
        midMessage, rogues - violations, tenth / 1024, all / 1024, (all - tenth) / 1024);
    assertThat(midMessage).as("rogues whose victim said it lost a message in the middle").isPositive();
    assertThat(messages).isGreaterThanOrEqualTo(Math.min(n, rogues * (perConnection + 1)));
    assertThat(all - tenth).as("retained heap growth over %d rogues, where keeping each stopped one's reassembly"
        + " alone would cost %d KiB", rogues - rogues / 10, (rogues - rogues / 10) / 5 * perRogue / 1024)
        .isLessThan(2 * MiB);
    RdmaConnection good = connect(client(server));
    StepVerifier.create(good.outbound().sendString(Mono.just("fine")).then()).expectComplete().verify(WAIT);
  }

  private static Object poll(java.util.concurrent.BlockingQueue<Object> q) {
    try {
      return q.poll(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
