package io.rdmareactive.rsocket;

import io.rdmareactive.rdma.transport.TransportFixture;
import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaServer;
import io.rdmareactive.rdma.transport.RdmaStatistics;
import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.SocketAcceptor;
import io.rsocket.core.RSocketConnector;
import io.rsocket.core.RSocketServer;
import io.rsocket.exceptions.RejectedSetupException;
import io.rsocket.frame.decoder.PayloadDecoder;
import io.rsocket.util.DefaultPayload;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

/**
 * RSocket over the RDMA transports, provider-neutral: the in-memory provider runs it on the host,
 * a subclass tagged {@code native} over Soft-RoCE. Every test ends with every received frame
 * released and as many live verbs objects as it started with.
 */
public abstract class AbstractRSocketTransportTest {
  /** The provider under test. */
  protected abstract TransportFixture fixture();
  protected static final Duration WAIT = Duration.ofSeconds(60); // rxe under TCG is ~13x slower than the host
  /** Larger than a receive buffer (16 KiB by default): travels in the transport's fragments. */
  private static final int LARGE = 1 << 20;

  private final List<io.rsocket.Closeable> closeables = new ArrayList<>();
  private Map<String, Integer> liveBefore = Map.of();

  protected RdmaServer rdmaServer() {
    return RdmaServer.create().host(fixture().host()).port(0).option(RdmaOption.PROVIDER, fixture().provider());
  }

  protected RdmaClient rdmaClient(int port) {
    return RdmaClient.create().host(fixture().host()).port(port).option(RdmaOption.PROVIDER, fixture().provider())
        .connectTimeout(Duration.ofSeconds(10));
  }

  // ---- the responder ------------------------------------------------------------------------

  /** What the server's responder saw. */
  final Sinks.Many<String> fireAndForgets = Sinks.many().replay().all();
  final Sinks.Many<String> metadataPushes = Sinks.many().replay().all();
  final AtomicLong streamEmitted = new AtomicLong();
  final AtomicBoolean streamCancelled = new AtomicBoolean();

  private final RSocket responder = new RSocket() {
    @Override
    public Mono<Void> fireAndForget(Payload payload) {
      try {
        fireAndForgets.tryEmitNext(payload.getDataUtf8());
      } finally {
        payload.release();
      }
      return Mono.empty();
    }

    @Override
    public Mono<Payload> requestResponse(Payload payload) {
      try {
        byte[] data = new byte[payload.data().readableBytes()];
        payload.data().getBytes(payload.data().readerIndex(), data);
        return Mono.just(DefaultPayload.create(data, payload.hasMetadata() ? payload.getMetadataUtf8().getBytes(StandardCharsets.UTF_8) : null));
      } finally {
        payload.release();
      }
    }

    @Override
    public Flux<Payload> requestStream(Payload payload) {
      long count;
      try {
        count = Long.parseLong(payload.getDataUtf8());
      } finally {
        payload.release();
      }
      return Flux.<Payload, Long>generate(() -> 0L, (i, sink) -> {
            if (i == count) {
              sink.complete();
            } else {
              streamEmitted.incrementAndGet();
              sink.next(DefaultPayload.create("item " + i));
            }
            return i + 1;
          })
          .doOnCancel(() -> streamCancelled.set(true));
    }

    @Override
    public Flux<Payload> requestChannel(Publisher<Payload> payloads) {
      return Flux.from(payloads).map(p -> {
        try {
          return DefaultPayload.create(p.getDataUtf8().toUpperCase());
        } finally {
          p.release();
        }
      });
    }

    @Override
    public Mono<Void> metadataPush(Payload payload) {
      try {
        metadataPushes.tryEmitNext(payload.getMetadataUtf8());
      } finally {
        payload.release();
      }
      return Mono.empty();
    }
  };

  protected CloseableRdmaServer bind() {
    CloseableRdmaServer s = RSocketServer.create(SocketAcceptor.with(responder))
        .bind(RdmaServerTransport.create(rdmaServer()))
        .block(WAIT);
    closeables.add(s);
    return s;
  }

  /** The client ends of the connections {@link #connect} made, in order. */
  final List<RdmaConnection> clientSide = new java.util.concurrent.CopyOnWriteArrayList<>();

  protected RSocket connect(CloseableRdmaServer server) {
    RSocket r = RSocketConnector.create()
        .connect(RdmaClientTransport.create(rdmaClient(server.port()).doOnConnected(clientSide::add)))
        .block(WAIT);
    closeables.add(r);
    return r;
  }

  @BeforeEach
  void snapshotLiveResources() {
    liveBefore = fixture().liveResources();
  }

  @AfterEach
  void closeAndCheckNothingLeaked() {
    for (io.rsocket.Closeable c : closeables.reversed()) {
      c.dispose();
      c.onClose().onErrorComplete().block(WAIT);
    }
    awaitNoLeaks();
  }

  private void awaitNoLeaks() {
    long deadline = System.nanoTime() + WAIT.toNanos();
    // A received frame not released keeps its receive buffer's memory registered after the
    // close (memory is freed with the last view), so the verbs objects find it too.
    while (!fixture().liveResources().equals(liveBefore) && System.nanoTime() < deadline) {
      LockSupport.parkNanos(5_000_000);
    }
    assertThat(fixture().liveResources()).as("live verbs objects after the test (before: %s)", liveBefore)
        .isEqualTo(liveBefore);
  }

  private static String text(Payload p) {
    try {
      return p.getDataUtf8();
    } finally {
      p.release();
    }
  }

  // ---- interactions ---------------------------------------------------------------------------

  @Test
  void requestResponse() {
    RSocket rsocket = connect(bind());
    StepVerifier.create(rsocket.requestResponse(DefaultPayload.create("hello", "meta")))
        .assertNext(p -> {
          assertThat(p.getDataUtf8()).isEqualTo("hello");
          assertThat(p.getMetadataUtf8()).isEqualTo("meta");
          p.release();
        })
        .expectComplete()
        .verify(WAIT);
  }

  /**
   * With {@link PayloadDecoder#ZERO_COPY} a payload is a view of the receive buffer the frame
   * landed in: no copy, and the buffer stays taken until the payload is released.
   */
  @Test
  void zeroCopyPayloadsHoldTheirReceiveBufferUntilReleased() {
    CloseableRdmaServer server = bind();
    RSocket rsocket = RSocketConnector.create()
        .payloadDecoder(PayloadDecoder.ZERO_COPY)
        .connect(RdmaClientTransport.create(rdmaClient(server.port()).doOnConnected(clientSide::add)))
        .block(WAIT);
    closeables.add(rsocket);
    Payload p = rsocket.requestResponse(DefaultPayload.create("zero-copy")).block(WAIT);
    assertThat(p).isNotNull();
    assertThat(p.data().unwrap()).isInstanceOf(SegmentByteBuf.class);
    RdmaConnection client = clientSide.getFirst();
    assertThat(client.statistics().messagesHeld()).as("the frame the payload is a view of").isGreaterThanOrEqualTo(1);
    assertThat(p.getDataUtf8()).isEqualTo("zero-copy");
    p.release();
    await(() -> client.statistics().messagesHeld() == 0);
  }

  /** A rejected setup goes back as an ERROR frame (sendErrorAndClose), then the connection closes. */
  @Test
  void aRejectedSetupReachesTheClient() {
    CloseableRdmaServer server = RSocketServer.create((setup, sendingSocket) -> Mono.error(new RejectedSetupException("not you")))
        .bind(RdmaServerTransport.create(rdmaServer()))
        .block(WAIT);
    closeables.add(server);
    RSocket rsocket = RSocketConnector.create()
        .connect(RdmaClientTransport.create(rdmaClient(server.port())))
        .block(WAIT);
    closeables.add(rsocket);
    StepVerifier.create(rsocket.requestResponse(DefaultPayload.create("x")))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(RejectedSetupException.class).hasMessageContaining("not you"))
        .verify(WAIT);
    StepVerifier.create(rsocket.onClose().onErrorComplete()).expectComplete().verify(WAIT);
  }

  @Test
  void manyConcurrentRequestResponses() {
    RSocket rsocket = connect(bind());
    StepVerifier.create(Flux.range(0, 2_000)
            .flatMap(i -> rsocket.requestResponse(DefaultPayload.create("r" + i)).map(AbstractRSocketTransportTest::text), 256)
            .collectList())
        .assertNext(got -> assertThat(got).hasSize(2_000).contains("r0", "r1999"))
        .expectComplete()
        .verify(WAIT);
  }

  @Test
  void fireAndForget() {
    RSocket rsocket = connect(bind());
    StepVerifier.create(Flux.range(0, 1_000).concatMap(i -> rsocket.fireAndForget(DefaultPayload.create("f" + i))))
        .expectComplete()
        .verify(WAIT);
    StepVerifier.create(fireAndForgets.asFlux().take(1_000).collectList())
        .assertNext(got -> assertThat(got).hasSize(1_000).startsWith("f0", "f1").endsWith("f999"))
        .expectComplete()
        .verify(WAIT);
  }

  @Test
  void requestStream() {
    RSocket rsocket = connect(bind());
    StepVerifier.create(rsocket.requestStream(DefaultPayload.create("10000")).map(AbstractRSocketTransportTest::text)
            .limitRate(64))
        .expectNext("item 0")
        .expectNextCount(9_998)
        .expectNext("item 9999")
        .expectComplete()
        .verify(WAIT);
    assertThat(streamEmitted.get()).isEqualTo(10_000);
  }

  @Test
  void requestStreamHonoursRequestN() {
    RSocket rsocket = connect(bind());
    StepVerifier.create(rsocket.requestStream(DefaultPayload.create("1000000")).map(AbstractRSocketTransportTest::text), 0)
        .thenRequest(5)
        .expectNext("item 0", "item 1", "item 2", "item 3", "item 4")
        .then(() -> LockSupport.parkNanos(200_000_000)) // the responder may not run ahead of REQUEST_N
        .then(() -> assertThat(streamEmitted.get()).isEqualTo(5))
        .thenRequest(3)
        .expectNext("item 5", "item 6", "item 7")
        .thenCancel()
        .verify(WAIT);
    await(streamCancelled::get);
    assertThat(streamEmitted.get()).isLessThanOrEqualTo(8);
  }

  @Test
  void slowSubscriberSlowsTheStream() {
    RSocket rsocket = connect(bind());
    StepVerifier.create(rsocket.requestStream(DefaultPayload.create("300")).map(AbstractRSocketTransportTest::text)
            .delayElements(Duration.ofMillis(1), reactor.core.scheduler.Schedulers.single())
            .limitRate(8)
            .doOnNext(s -> assertThat(streamEmitted.get()).as("emitted ahead of the subscriber")
                .isLessThanOrEqualTo(Long.parseLong(s.substring(5)) + 1 + 32)))
        .expectNextCount(300)
        .expectComplete()
        .verify(WAIT);
  }

  /**
   * A slow requester that keeps its (zero-copy) payloads queued keeps their receive buffers, so
   * its transport grants no credits and the responder's sends wait for them: credit stalls on
   * the responder's connection, never a receiver-not-ready retry, and the whole stream arrives.
   * Small buffers (64 bytes, about two frames each): with the default 16 KiB, the responder's
   * frames coalesce so many to a SEND that 8 buffers carry the whole stream.
   */
  @Test
  void aSlowRequesterHoldingItsPayloadsStallsTheResponderOnCreditsNeverOnRnr() {
    List<RdmaConnection> responderSide = new java.util.concurrent.CopyOnWriteArrayList<>();
    CloseableRdmaServer server = RSocketServer.create(SocketAcceptor.with(responder))
        .bind(RdmaServerTransport.create(rdmaServer().option(RdmaOption.BUFFER_COUNT, 8)
            .option(RdmaOption.BUFFER_SIZE, 64).doOnConnection(responderSide::add)))
        .block(WAIT);
    closeables.add(server);
    RSocket rsocket = RSocketConnector.create()
        .payloadDecoder(PayloadDecoder.ZERO_COPY)
        .connect(RdmaClientTransport.create(rdmaClient(server.port()).option(RdmaOption.BUFFER_COUNT, 8)
            .option(RdmaOption.BUFFER_SIZE, 64)))
        .block(WAIT);
    closeables.add(rsocket);
    StepVerifier.create(rsocket.requestStream(DefaultPayload.create("200"))
            .publishOn(reactor.core.scheduler.Schedulers.single(), 64) // up to 64 held, 8 buffers
            .delayElements(Duration.ofMillis(1), reactor.core.scheduler.Schedulers.single())
            .map(p -> {
              try {
                return p.getDataUtf8();
              } finally {
                p.release();
              }
            }))
        .expectNextCount(200)
        .expectComplete()
        .verify(WAIT);
    assertThat(responderSide).hasSize(1);
    RdmaStatistics stats = responderSide.getFirst().statistics();
    assertThat(stats.creditStalls()).as("the responder waited for credits: %s", stats).isPositive();
    assertThat(stats.receiverNotReady()).as("and never met a receiver not ready: %s", stats).isZero();
  }

  @Test
  void cancellingAStreamFreesItsBuffers() {
    RSocket rsocket = connect(bind());
    StepVerifier.create(rsocket.requestStream(DefaultPayload.create(String.valueOf(Long.MAX_VALUE)))
            .map(AbstractRSocketTransportTest::text)
            .take(100))
        .expectNextCount(100)
        .expectComplete()
        .verify(WAIT);
    await(streamCancelled::get);
    await(() -> clientSide.getFirst().statistics().messagesHeld() == 0);
    // the connection still works after the cancel
    StepVerifier.create(rsocket.requestResponse(DefaultPayload.create("after")).map(AbstractRSocketTransportTest::text))
        .expectNext("after")
        .expectComplete()
        .verify(WAIT);
  }

  @Test
  void requestChannel() {
    RSocket rsocket = connect(bind());
    Flux<Payload> out = Flux.range(0, 5_000).map(i -> DefaultPayload.create("c" + i));
    StepVerifier.create(rsocket.requestChannel(out).map(AbstractRSocketTransportTest::text).limitRate(100))
        .expectNext("C0")
        .expectNextCount(4_998)
        .expectNext("C4999")
        .expectComplete()
        .verify(WAIT);
  }

  @Test
  void metadataPush() {
    RSocket rsocket = connect(bind());
    StepVerifier.create(rsocket.metadataPush(DefaultPayload.create(new byte[0], "routes-changed".getBytes(StandardCharsets.UTF_8))))
        .expectComplete()
        .verify(WAIT);
    StepVerifier.create(metadataPushes.asFlux().next())
        .expectNext("routes-changed")
        .expectComplete()
        .verify(WAIT);
  }

  @Test
  void largePayloadsTravelInTheTransportsFragments() {
    RSocket rsocket = connect(bind());
    byte[] data = new byte[LARGE];
    new Random(7).nextBytes(data);
    StepVerifier.create(rsocket.requestResponse(DefaultPayload.create(data)))
        .assertNext(p -> {
          try {
            byte[] got = new byte[p.data().readableBytes()];
            p.data().getBytes(p.data().readerIndex(), got);
            assertThat(got).isEqualTo(data);
          } finally {
            p.release();
          }
        })
        .expectComplete()
        .verify(WAIT);
  }

  @Test
  void closingTheClientClosesTheServersConnection() {
    CloseableRdmaServer server = bind();
    RSocket rsocket = connect(server);
    StepVerifier.create(rsocket.requestResponse(DefaultPayload.create("x")).map(AbstractRSocketTransportTest::text))
        .expectNext("x")
        .expectComplete()
        .verify(WAIT);
    rsocket.dispose();
    StepVerifier.create(rsocket.onClose()).expectComplete().verify(WAIT);
    server.dispose();
    StepVerifier.create(server.onClose()).expectComplete().verify(WAIT);
    awaitNoLeaks();
  }

  @Test
  void closingTheServerClosesTheClient() {
    CloseableRdmaServer server = bind();
    RSocket rsocket = connect(server);
    // a stream in flight when the server goes
    Flux<String> stream = rsocket.requestStream(DefaultPayload.create(String.valueOf(Long.MAX_VALUE)))
        .map(AbstractRSocketTransportTest::text)
        .limitRate(16);
    StepVerifier.create(stream)
        .expectNextCount(10)
        .then(server::dispose)
        .thenConsumeWhile(s -> true)
        .expectError()
        .verify(WAIT);
    StepVerifier.create(rsocket.onClose().onErrorComplete()).expectComplete().verify(WAIT);
    awaitNoLeaks();
  }

  /**
   * A responder that emits without bound on the connection's event loop (an unbounded REQUEST_N
   * and a synchronous source) overflows the frames waiting for credits: its connection closes
   * with an error, the requester sees the connection go, and everything is freed.
   */
  @Test
  void framesBeyondMaxPendingFramesCloseTheConnection() {
    CloseableRdmaServer server = RSocketServer.create(SocketAcceptor.with(responder))
        .bind(RdmaServerTransport.create(rdmaServer()).maxPendingFrames(64))
        .block(WAIT);
    closeables.add(server);
    RSocket rsocket = connect(server);
    StepVerifier.create(rsocket.requestStream(DefaultPayload.create(String.valueOf(Long.MAX_VALUE)))
            .map(AbstractRSocketTransportTest::text))
        .thenConsumeWhile(s -> true)
        .expectError()
        .verify(WAIT);
    await(streamCancelled::get);
  }

  /**
   * The same bound in bytes: 128 frames of 64 KiB that a responder emits at once (8 MiB) fit the
   * default maxPendingBytes (64 MiB) and arrive whole, and pass a maxPendingBytes of 1 MiB long
   * before maxPendingFrames: that connection closes with an error and everything is freed. The
   * transport takes a credits' worth of frames at a time (far below 128 of this size), so most of
   * them wait.
   */
  @Test
  void framesBeyondMaxPendingBytesCloseTheConnection() {
    byte[] data = new byte[64 << 10];
    SocketAcceptor frames = SocketAcceptor.forRequestStream(request -> {
      request.release();
      return Flux.range(0, 128).map(i -> io.rsocket.util.ByteBufPayload.create(io.netty.buffer.Unpooled.wrappedBuffer(data)));
    });
    CloseableRdmaServer roomy = RSocketServer.create(frames).bind(RdmaServerTransport.create(rdmaServer())).block(WAIT);
    closeables.add(roomy);
    StepVerifier.create(connect(roomy).requestStream(DefaultPayload.create("")).doOnNext(Payload::release).count())
        .expectNext(128L)
        .expectComplete()
        .verify(WAIT);
    CloseableRdmaServer tight = RSocketServer.create(frames)
        .bind(RdmaServerTransport.create(rdmaServer()).maxPendingBytes(1 << 20))
        .block(WAIT);
    closeables.add(tight);
    StepVerifier.create(connect(tight).requestStream(DefaultPayload.create("")).doOnNext(Payload::release))
        .thenConsumeWhile(p -> true)
        .expectError()
        .verify(WAIT); // and nothing leaks: checked after each test, once the servers are closed
  }

  /**
   * Frames still waiting when the connection goes (in {@link FrameSender}, or handed to the
   * transport and not yet copied into a send buffer: the transport owns those until it posts
   * them) are all released: every payload the responder made ends with a reference count of 0.
   */
  @Test
  void framesStillWaitingWhenTheConnectionClosesAreReleased() {
    List<io.netty.buffer.ByteBuf> made = java.util.Collections.synchronizedList(new ArrayList<>());
    CloseableRdmaServer server = RSocketServer.create(SocketAcceptor.forRequestStream(request -> {
          request.release();
          return Flux.range(0, 100_000).map(i -> {
            io.netty.buffer.ByteBuf data = io.netty.buffer.Unpooled.directBuffer(1024).writeZero(1024);
            made.add(data);
            return io.rsocket.util.ByteBufPayload.create(data);
          });
        }))
        .bind(RdmaServerTransport.create(rdmaServer()))
        .block(WAIT);
    closeables.add(server);
    RSocket rsocket = connect(server);
    AtomicLong received = new AtomicLong();
    rsocket.requestStream(DefaultPayload.create("")).limitRate(4096).subscribe(p -> {
      p.release();
      if (received.incrementAndGet() == 10) {
        rsocket.dispose(); // hundreds of frames still wait on the server's side
      }
    }, e -> {});
    await(() -> received.get() >= 10 && rsocket.isDisposed());
    await(() -> made.size() >= 10 && made.stream().allMatch(b -> b.refCnt() == 0));
    assertThat(made.size()).as("the responder ran ahead of the link: frames were waiting").isGreaterThan(100);
  }

  /**
   * An RSocket close sends an ERROR frame, which needs a credit: a peer that grants none (here a
   * plain transport server whose handler subscribes, never requests and never sends, so the SETUP
   * took the one data credit of the reserve; with one buffer the client never has the two grants
   * a credit update needs, so nothing draws a grant back) cannot hold the connection open. The frame waits a
   * few seconds, then the connection closes without it and everything is freed.
   */
  @Test
  void aPeerGrantingNoCreditCannotHoldAnRSocketClose() {
    io.rdmareactive.rdma.transport.WithoutDemand handler = new io.rdmareactive.rdma.transport.WithoutDemand();
    io.rdmareactive.rdma.transport.DisposableRdmaServer peer = rdmaServer().handle((in, out) -> {
      in.receive().subscribe(handler);
      return Mono.never();
    }).bindNow(WAIT);
    try {
      java.util.concurrent.atomic.AtomicReference<RdmaConnection> connection = new java.util.concurrent.atomic.AtomicReference<>();
      RSocket rsocket = RSocketConnector.create()
          .connect(RdmaClientTransport.create(rdmaClient(peer.port()).option(RdmaOption.BUFFER_COUNT, 1)
              .doOnConnected(connection::set))).block(WAIT);
      StepVerifier.create(handler.subscribed()).expectComplete().verify(WAIT);
      rsocket.dispose(); // RSocket sends ERROR[CONNECTION_ERROR]; the transport closes once it went out
      StepVerifier.create(rsocket.onClose().onErrorComplete()).expectComplete().verify(WAIT);
      StepVerifier.create(connection.get().onDispose()).as("the RDMA connection, while its peer still holds it")
          .expectComplete().verify(WAIT);
    } finally {
      peer.disposeNow(WAIT);
    }
    awaitNoLeaks();
  }

  private static void await(java.util.function.BooleanSupplier condition) {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("timed out waiting").isLessThan(deadline);
      LockSupport.parkNanos(1_000_000);
    }
  }
}
