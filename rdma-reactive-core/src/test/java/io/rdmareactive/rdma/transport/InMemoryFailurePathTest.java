package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.spi.ConnectionProvider;
import io.rdmareactive.rdma.spi.Endpoint;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.QueuePairAddress;
import io.rdmareactive.rdma.verbs.QueuePairConnectOptions;
import io.rdmareactive.rdma.verbs.QueuePairState;
import io.rdmareactive.rdma.verbs.QueuePairType;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.ReceiveBatch;
import io.rdmareactive.rdma.verbs.ReceiveRequest;
import io.rdmareactive.rdma.verbs.SendBatch;
import io.rdmareactive.rdma.verbs.SendRequest;
import io.rdmareactive.rdma.verbs.SharedReceiveQueue;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

/**
 * Two ways a connection fails that only a fault can reach, on the in-memory provider: a drain that
 * throws at every pass (the give-up path, {@link ConnectionCloser#abandon}), and a post that fails
 * while a rendezvous is being sent ({@link RendezvousSender#send}). Each must end every send and
 * the connection, and free what the rendezvous exposed; the leak check after each test sees to the
 * rest. Host-only: the post failure is injected by a decorator of the client's endpoint
 * ({@link FailingPostEndpoint}).
 */
class InMemoryFailurePathTest extends RegisteredMemorySuite {
  private static final int THRESHOLD = 64 * 1024;

  @Override
  protected TransportFixture fixture() {
    return InMemoryFixture.INSTANCE;
  }

  @Override
  String loopsName() {
    return "failure-paths";
  }

  @Override
  long memorySize() {
    return 1 << 20;
  }

  @Override
  int seed() {
    return 31;
  }

  private MemoryRegion register(boolean windows) {
    return register(pd, memory, windows ? EnumSet.of(Access.LOCAL_WRITE, Access.MW_BIND) : Access.local());
  }

  /**
   * A receive subscriber whose onNext throws at every message (a Reactive Streams violation, but
   * user code) makes the drain throw at every pass once messages wait for it, so that the drain
   * gives up ({@link ConnectionCloser#abandon}). A rendezvous send the peer never read, waiting
   * for its DONE, still ends, with the subscriber's exception, as does a send queued behind it;
   * the connection's onDispose completes, the peer sees the connection end, and the rendezvous
   * message is released. Without abandon's failing of the sources the waiting send never ends.
   */
  @ParameterizedTest(name = "windows {0}")
  @ValueSource(booleans = {true, false})
  void aDrainThatKeepsThrowingEndsEverySendWhenItGivesUp(boolean windows) {
    MemoryRegion region = register(windows);
    AtomicReference<RdmaConnection> serverSide = new AtomicReference<>();
    Sinks.Empty<Void> speak = Sinks.empty();
    // It never reads: the rendezvous message waits for a DONE that does not come.
    DisposableRdmaServer server = bind(server().doOnConnection(serverSide::set).handle((in, out) -> out
        .sendString(speak.asMono().thenMany(Flux.range(0, 8).map(String::valueOf))).then(Mono.never())));
    RdmaConnection c = connect(client(server).runOn(loops).option(RdmaOption.RENDEZVOUS_THRESHOLD, THRESHOLD)
        .option(RdmaOption.CLOSE_TIMEOUT, WAIT.multipliedBy(2))); // the DONE's deadline stays out of the way
    RuntimeException boom = new IllegalStateException("test: onNext throws at every message");
    ThrowingReceiver receiver = new ThrowingReceiver(boom);
    c.inbound().receive().subscribe(receiver);
    RegisteredMessage large = OutboundMessage.of(region, 0, 200_000);
    StepVerifier waiting = StepVerifier.create(c.outbound().send(Mono.just(large)))
        .expectErrorSatisfies(e -> assertThat(e).isSameAs(boom)).verifyLater();
    await(() -> c.statistics().bytesSent() >= large.length()); // its descriptor is posted: it waits for the DONE
    StepVerifier queued = StepVerifier.create(c.outbound().send(Flux.never()))
        .expectErrorSatisfies(e -> assertThat(e).isSameAs(boom)).verifyLater();
    speak.tryEmitEmpty();
    await(() -> c.statistics().messagesReceived() >= 8); // every one waits for demand, as the throws need
    receiver.upstream().request(Long.MAX_VALUE);
    waiting.verify(WAIT);
    queued.verify(WAIT);
    assertThat(receiver.throwsSoFar()).as("onNext threw at four passes in a row: the drain gave up").isGreaterThanOrEqualTo(4);
    StepVerifier.create(large.released()).expectComplete().verify(WAIT);
    StepVerifier.create(c.onDispose()).expectComplete().verify(WAIT);
    StepVerifier.create(serverSide.get().onDispose()).expectComplete().verify(WAIT);
  }

  /**
   * A post that fails inside {@link RendezvousSender#send} (the send queue's list is full as the
   * message's bind or descriptor is queued, and ibv_post_send refuses it) fails the connection with
   * the post's exception, not the message alone: the send carrying the message and one queued
   * behind it end with it, the connection's inbound ends with it, both sides' onDispose complete,
   * and the window or registration the message was exposed by is freed at the close, the message
   * released. Without the entry joining {@code exposed} before the posts the exposure leaks; with
   * the post's exception caught as the message's failure the connection and the send behind it
   * never end.
   */
  @ParameterizedTest(name = "windows {0}")
  @ValueSource(booleans = {true, false})
  void aPostFailingInsideARendezvousFailsTheConnection(boolean windows) {
    MemoryRegion region = register(windows);
    AtomicReference<RdmaConnection> serverSide = new AtomicReference<>();
    // No shared receive queue: the server grants its full window at once, which the full list needs.
    DisposableRdmaServer server = bind(server().option(RdmaOption.SHARED_RECEIVE_QUEUE, false)
        .doOnConnection(serverSide::set).handle((in, out) -> in.receive().doOnNext(RdmaMessage::release).then()));
    NativeCallException refused = NativeCallException.of("ibv_post_send", NativeCallException.EINVAL,
        NativeCallException.describe(NativeCallException.EINVAL), "test: a post inside a rendezvous");
    FailingPostEndpoint endpoint = connectThrough(client(server).runOn(loops)
        .option(RdmaOption.RENDEZVOUS_THRESHOLD, THRESHOLD), refused);
    RdmaConnection c = endpoint.connection();
    Sinks.One<Throwable> inboundEnded = Sinks.one();
    c.inbound().receive().subscribe(RdmaMessage::release, inboundEnded::tryEmitValue);
    int full = SendDoorbell.MAX_POST_LIST;
    await(() -> c.statistics().credits() > full + Protocol.RESERVE); // the list fills in one pass
    // Registered messages below the threshold go one SEND each, never coalesced: 'full' of them
    // fill the list, so the rendezvous' first work request finds it full and posts it.
    List<RegisteredMessage> messages = new ArrayList<>();
    for (int i = 0; i < full; i++) {
      messages.add(OutboundMessage.of(region, i * 1000L, 1000));
    }
    RegisteredMessage large = OutboundMessage.of(region, full * 1000L, 200_000);
    messages.add(large);
    endpoint.arm();
    StepVerifier first = StepVerifier.create(c.outbound().send(Flux.fromIterable(messages)))
        .expectErrorSatisfies(e -> assertThat(e).isSameAs(refused)).verifyLater();
    StepVerifier behind = StepVerifier.create(c.outbound().sendString(Mono.just("behind")))
        .expectErrorSatisfies(e -> assertThat(e).isSameAs(refused)).verifyLater();
    await(endpoint::fired); // the post inside the rendezvous failed: what the rest follows from
    first.verify(WAIT);
    behind.verify(WAIT);
    StepVerifier.create(inboundEnded.asMono()).assertNext(e -> assertThat(e).isSameAs(refused)).expectComplete()
        .verify(WAIT);
    StepVerifier.create(c.onDispose()).expectComplete().verify(WAIT);
    StepVerifier.create(serverSide.get().onDispose()).expectComplete().verify(WAIT);
    assertThat(messages).as("released at the close").allSatisfy(m ->
        StepVerifier.create(m.released()).expectComplete().verify(WAIT));
    if (windows) { // only a rendezvous makes windows; a registration's leak the leak check after the test sees
      await(() -> !fixture().liveResources().containsKey("mw"));
    }
  }

  /**
   * Connects as {@link RdmaClient#connect()} does, through its own handshake, but over a
   * {@link FailingPostEndpoint} wrapping the provider's endpoint, which fails with {@code failure}
   * once armed: a test decorates the verbs a connection posts to without a hook in the main code.
   */
  private FailingPostEndpoint connectThrough(RdmaClient client, RuntimeException failure) {
    TransportConfig config = client.config;
    InetSocketAddress address = Addresses.resolve(config.host(), config.port());
    ConnectionProvider provider = config.connectionProvider();
    FailingPostEndpoint endpoint = new FailingPostEndpoint(Objects.requireNonNull(
        provider.connect(address, config.endpointOptions(provider, config.hello()), WAIT).block(WAIT)), failure);
    RdmaConnection connection = Objects.requireNonNull(client.handshake(config, endpoint, address, WAIT).block(WAIT));
    clients.add(connection);
    endpoint.connection = connection;
    return endpoint;
  }

  /** Takes no message until told, and throws {@code boom} from onNext at every one it takes (after releasing it). */
  private static final class ThrowingReceiver implements CoreSubscriber<RdmaMessage> {
    private final RuntimeException boom;
    private final AtomicReference<@Nullable Subscription> upstream = new AtomicReference<>();
    private final AtomicInteger throwsSoFar = new AtomicInteger();

    ThrowingReceiver(RuntimeException boom) {
      this.boom = boom;
    }

    Subscription upstream() {
      return Objects.requireNonNull(upstream.get());
    }

    /** How often onNext threw. */
    int throwsSoFar() {
      return throwsSoFar.get();
    }

    @Override
    public void onSubscribe(Subscription s) {
      upstream.set(s);
    }

    @Override
    public void onNext(RdmaMessage m) {
      m.release();
      throwsSoFar.incrementAndGet();
      throw boom;
    }

    @Override
    public void onError(Throwable t) {}

    @Override
    public void onComplete() {}
  }

  /**
   * The provider's endpoint, its queue pair decorated: once armed, the first list posted from
   * inside {@link RendezvousSender#send} is refused with {@code failure}, none of it taken, as
   * ibv_post_send refuses a list whose first request is bad.
   */
  static final class FailingPostEndpoint implements Endpoint {
    private final Endpoint real;
    private final QueuePair qp;
    private final AtomicBoolean armed = new AtomicBoolean();
    private final AtomicBoolean fired = new AtomicBoolean();
    /** The connection on it, once made. */
    @Nullable RdmaConnection connection;

    FailingPostEndpoint(Endpoint real, RuntimeException failure) {
      this.real = real;
      this.qp = new FailingQueuePair(real.queuePair(), this, failure);
    }

    RdmaConnection connection() {
      return Objects.requireNonNull(connection);
    }

    void arm() {
      armed.set(true);
    }

    boolean fired() {
      return fired.get();
    }

    /** Whether this post is the one to fail: armed, and inside a rendezvous' send. */
    boolean failsNow() {
      if (!armed.get()) {
        return false;
      }
      boolean inside = StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE).walk(frames -> frames
          .anyMatch(f -> f.getDeclaringClass() == RendezvousSender.class && f.getMethodName().equals("send")));
      if (inside && armed.compareAndSet(true, false)) {
        fired.set(true);
        return true;
      }
      return false;
    }

    @Override
    public RdmaContext context() {
      return real.context();
    }

    @Override
    public ProtectionDomain protectionDomain() {
      return real.protectionDomain();
    }

    @Override
    public QueuePair queuePair() {
      return qp;
    }

    @Override
    public CompletionQueue completionQueue() {
      return real.completionQueue();
    }

    @Override
    public @Nullable SharedReceiveQueue sharedReceiveQueue() {
      return real.sharedReceiveQueue();
    }

    @Override
    public byte[] remotePrivateData() {
      return real.remotePrivateData();
    }

    @Override
    public void reject(byte[] privateData) {
      real.reject(privateData);
    }

    @Override
    public Mono<Void> establish() {
      return real.establish();
    }

    @Override
    public Mono<Void> onDisconnect() {
      return real.onDisconnect();
    }

    @Override
    public void disconnect() {
      real.disconnect();
    }

    @Override
    public @Nullable ConnectionException faultBehind(@Nullable Throwable failure) {
      return real.faultBehind(failure);
    }

    @Override
    public boolean isClosed() {
      return real.isClosed();
    }

    @Override
    public void close() {
      real.close();
    }
  }

  /** A queue pair that posts through {@code real}, but refuses the list its endpoint says to fail. */
  private record FailingQueuePair(QueuePair real, FailingPostEndpoint endpoint, RuntimeException failure)
      implements QueuePair {
    @Override
    public void postSend(SendBatch batch) {
      if (endpoint.failsNow()) {
        batch.posted(0);
        throw failure;
      }
      real.postSend(batch);
    }

    @Override
    public void postSend(SendRequest request) {
      real.postSend(request);
    }

    @Override
    public void postReceive(ReceiveBatch batch) {
      real.postReceive(batch);
    }

    @Override
    public void postReceive(ReceiveRequest request) {
      real.postReceive(request);
    }

    @Override
    public int qpNumber() {
      return real.qpNumber();
    }

    @Override
    public QueuePairType type() {
      return real.type();
    }

    @Override
    public QueuePairState state() {
      return real.state();
    }

    @Override
    public QueuePairAddress localAddress(QueuePairConnectOptions options) {
      return real.localAddress(options);
    }

    @Override
    public void connect(QueuePairAddress remote, QueuePairConnectOptions options) {
      real.connect(remote, options);
    }

    @Override
    public void toError() {
      real.toError();
    }

    @Override
    public boolean isClosed() {
      return real.isClosed();
    }

    @Override
    public void close() {
      real.close();
    }
  }
}
