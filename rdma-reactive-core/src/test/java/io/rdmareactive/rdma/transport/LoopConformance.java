package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.conformance.LeakCheck;
import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.MessageTooLargeException;
import io.rdmareactive.rdma.device.RdmaDevices;
import io.rdmareactive.rdma.ResourceClosedException;
import io.rdmareactive.rdma.spi.ConnectionProvider;
import io.rdmareactive.rdma.spi.Endpoint;
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

/** Loops and scale: many connections share a few named loop threads, which end with the last of them. */
public abstract class LoopConformance extends TransportSuite {

  @Test
  void manyConnectionsShareTwoEventLoops() {
    echoOnLoops(RdmaLoopResources.create("conf-event", 2), "conf-event-");
  }

  @Test
  void atScaleThreadsStayAtTheLoopCount() {
    long before = Thread.activeCount();
    int peak = echoOnLoops(RdmaLoopResources.create("conf-scale", 4), "conf-scale-", fixture().scaleConnections());
    assertThat(peak - before).as("threads added at peak with %d connections", fixture().scaleConnections())
        .isLessThanOrEqualTo(4 + 32); // the loops, plus Reactor's bounded-elastic workers for connects
  }

  /**
   * A loop's first {@code LOOP_PRIVATE_CONNECTIONS} connections keep send buffers of their own, the
   * next ones borrow its send pool; all receive through its SRQ (with SHARED_RECEIVE_QUEUE). One
   * made after a private one closed counts the connections on the loop then, so no more than that
   * many keep their own.
   */
  @Test
  void aLoopsFirstConnectionsKeepTheirOwnSendBuffersAndTheRestBorrowItsPool() {
    RdmaLoopResources loops = RdmaLoopResources.create("conf-own", 1);
    RdmaLoopResources clientLoops = RdmaLoopResources.create("conf-own-client", 1);
    List<RdmaConnection> served = new java.util.concurrent.CopyOnWriteArrayList<>();
    DisposableRdmaServer server = bind(server().runOn(loops).option(RdmaOption.LOOP_PRIVATE_CONNECTIONS, 2)
        .doOnConnection(served::add).handle((in, out) -> out.send(in.receive())));
    List<RdmaConnection> conns = new ArrayList<>();
    try {
      for (int i = 0; i < 2; i++) {
        conns.add(echoOnce(server, clientLoops));
        await(() -> served.size() == conns.size());
        assertKeepsOnlySends(served.get(i), "connection " + i);
        assertThat(loops.registeredSendBytes()).as("the loop's send pool with %d connections", i + 1).isZero();
        assertThat(loops.sharedReceiveQueueCount()).as("the loop's SRQs with %d connections", i + 1)
            .isEqualTo(SHARED_RECEIVE_QUEUE ? 1 : 0); // receives are not private
      }
      conns.add(echoOnce(server, clientLoops));
      await(() -> served.size() == 3);
      assertThat(loops.registeredSendBytes()).as("the third borrows the loop's send pool").isPositive();
      assertOnPools(loops, served.get(2), served.get(1));
      conns.remove(0).dispose();
      served.get(0).onDispose().block(WAIT);
      conns.add(echoOnce(server, clientLoops));
      await(() -> served.size() == 4);
      assertOnPools(loops, served.get(3), served.get(1)); // two were still on the loop when it came
      long pooledBytes = served.get(3).statistics().registeredBytes();
      conns.remove(0).dispose(); // the second (its own) and the third (pooled): one is left on the loop
      conns.remove(0).dispose();
      served.get(1).onDispose().block(WAIT);
      served.get(2).onDispose().block(WAIT);
      await(() -> loops.endpointCount() == 1); // an endpoint gives its loop back after onDispose
      conns.add(echoOnce(server, clientLoops));
      await(() -> served.size() == 5);
      // With the SRQ off both counts include the connection's own receives, which it registers as
      // its window grows (lazily): the fifth may not have them all yet when it comes.
      waitFor(() -> served.get(4).statistics().registeredBytes() > pooledBytes);
      assertThat(served.get(4).statistics().registeredBytes()).as("a fifth, made with one other on the loop")
          .isGreaterThan(pooledBytes);
      assertKeepsOnlySends(served.get(4), "the fifth");
    } finally {
      conns.forEach(RdmaConnection::dispose);
      Flux.fromIterable(conns).flatMap(RdmaConnection::onDispose).then().block(WAIT);
      clients.removeAll(conns);
      server.disposeNow(WAIT);
      servers.remove(server);
      StepVerifier.create(Mono.when(loops.disposeLater(), clientLoops.disposeLater())).verifyComplete();
    }
  }

  /** A connection that echoed one message; the client is on {@code loops}. */
  private RdmaConnection echoOnce(DisposableRdmaServer server, RdmaLoopResources loops) {
    RdmaConnection c = connect(client(server).runOn(loops));
    StepVerifier.create(Mono.when(c.outbound().send(Mono.just(new byte[1024])), c.inbound().receiveBytes().take(1).then()))
        .expectComplete().verify(WAIT);
    return c;
  }

  /**
   * {@code c}, having echoed one message, registered buffers of its own, and with the SRQ no more
   * than one chunk, its sends': a receive queue of its own would have registered its reserve too.
   */
  private static void assertKeepsOnlySends(RdmaConnection c, String what) {
    assertThat(c.statistics().registeredBytes()).as(what + "'s own buffers").isPositive();
    if (SHARED_RECEIVE_QUEUE) {
      int size = RdmaOption.BUFFER_SIZE.defaultValue();
      assertThat(c.statistics().registeredBytes()).as(what + "'s own buffers: one chunk of sends, no receives")
          .isLessThanOrEqualTo((long) Math.max(RegisteredBuffers.MIN_CHUNK_BUFFERS, RegisteredBuffers.CHUNK_BYTES / size) * size);
    }
  }

  /** {@code pooled} borrows its loop's send buffers, where {@code own} keeps its own. */
  private static void assertOnPools(RdmaLoopResources loops, RdmaConnection pooled, RdmaConnection own) {
    if (SHARED_RECEIVE_QUEUE) {
      assertThat(loops.sharedReceiveQueueCount()).as("the loop's SRQ").isEqualTo(1);
      assertThat(pooled.statistics().registeredBytes()).as("a pooled connection's own buffers").isZero();
      assertThat(own.statistics().registeredBytes()).as("a private connection's own (send) buffers").isPositive();
    } else { // its receives are its own either way: its sends are not
      assertThat(pooled.statistics().registeredBytes()).as("a pooled connection's own buffers (receives only)")
          .isLessThan(own.statistics().registeredBytes());
    }
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
   * A user registers memory on the loops' PD, the one their connections share; it stays while
   * the memory does, through a connection's close, and goes when the resources are disposed.
   */
  @Test
  void usersRegisterMemoryOnTheLoopsSharedProtectionDomain() {
    RdmaLoopResources loops = RdmaLoopResources.create("conf-pd", 1);
    io.rdmareactive.rdma.spi.RdmaProvider provider = RdmaDevices.provider(fixture().provider());
    String device = provider.devices().getFirst().name();
    io.rdmareactive.rdma.verbs.ProtectionDomain pd = loops.protectionDomain(provider, device);
    assertThat(loops.protectionDomain(provider, device)).isSameAs(pd);
    try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
      io.rdmareactive.rdma.verbs.MemoryRegion mr = pd.registerMemory(arena.allocate(4096, 4096),
          io.rdmareactive.rdma.verbs.Access.local());
      DisposableRdmaServer server = bind(server().runOn(loops).handle((in, out) -> out.send(in.receive())));
      RdmaConnection c = client(server).runOn(loops).connectNow(WAIT);
      StepVerifier.create(c.outbound().sendString(Mono.just("x")).then()
          .and(c.inbound().receiveString().take(1).single().doOnNext(s -> assertThat(s).isEqualTo("x"))))
          .verifyComplete();
      assertThat(loops.protectionDomainCount()).as("both ends of the connection and the user's memory").isEqualTo(1);
      c.dispose();
      c.onDispose().block(WAIT);
      server.disposeNow(WAIT);
      servers.remove(server);
      assertThat(pd.isClosed()).as("a pinned PD after its connections closed").isFalse();
      mr.close();
    }
    StepVerifier.create(loops.disposeLater()).verifyComplete();
    assertThat(loops.protectionDomainCount()).isZero();
    assertThat(pd.isClosed()).isTrue();
    assertThatThrownBy(() -> loops.protectionDomain(provider, device)).isInstanceOf(IllegalStateException.class);
    oneMoreConnection();
  }

  /**
   * Endpoints on one shared receive queue, through the connection SPI: two server endpoints take
   * their PD from the loops and their QP's receives from one SRQ on it; each client's SEND lands
   * in a buffer posted to the SRQ, and completes on the CQ of the server endpoint it reached, with
   * that endpoint's QP number. The endpoints give the SRQ and the PD back once, when closed.
   */
  @Test
  void endpointsTakeTheirReceivesFromASharedReceiveQueueOnTheLoopsPd() throws InterruptedException {
    ConnectionProvider cp = fixture().connections();
    io.rdmareactive.rdma.spi.RdmaProvider provider = RdmaDevices.provider(fixture().provider());
    RdmaLoopResources loops = RdmaLoopResources.create("conf-srq", 1);
    io.rdmareactive.rdma.verbs.ProtectionDomain pd = loops.protectionDomain(provider, provider.devices().getFirst().name());
    AtomicInteger acquired = new AtomicInteger();
    AtomicInteger released = new AtomicInteger();
    List<Endpoint> endpoints = new ArrayList<>();
    try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared()) {
      io.rdmareactive.rdma.verbs.SharedReceiveQueue srq = pd.createSharedReceiveQueue(
          io.rdmareactive.rdma.verbs.SharedReceiveQueueOptions.of(8));
      java.lang.foreign.MemorySegment slab = arena.allocate(4 * 1024, 4096);
      io.rdmareactive.rdma.verbs.MemoryRegion slabRegion = pd.registerMemory(slab, io.rdmareactive.rdma.verbs.Access.local());
      io.rdmareactive.rdma.spi.SharedReceiveQueueSource srqs = new io.rdmareactive.rdma.spi.SharedReceiveQueueSource() {
        @Override
        public io.rdmareactive.rdma.verbs.SharedReceiveQueue acquire(io.rdmareactive.rdma.verbs.CompletionChannel channel,
            io.rdmareactive.rdma.verbs.ProtectionDomain on) {
          assertThat(on).as("the endpoint's PD").isSameAs(pd);
          acquired.incrementAndGet();
          return srq;
        }

        @Override
        public void release(io.rdmareactive.rdma.verbs.SharedReceiveQueue s) {
          assertThat(s).isSameAs(srq);
          released.incrementAndGet();
        }
      };
      EndpointOptions serverOptions = new EndpointOptions(4, 4, 0, new byte[0]).withDomains(loops.domains(cp))
          .withReceiveQueues(srqs);
      for (int i = 0; i < 4; i++) {
        srq.postReceive(new io.rdmareactive.rdma.verbs.ReceiveRequest().set(i, slabRegion, i * 1024L, 1024));
      }
      try (Listener listener = cp.listen(new InetSocketAddress(fixture().host(), 0), serverOptions)) {
        InetSocketAddress at = new InetSocketAddress(fixture().host(), listener.boundAddress().getPort());
        List<Endpoint> servers = new ArrayList<>();
        List<Endpoint> clientsEp = new ArrayList<>();
        java.util.concurrent.BlockingQueue<io.rdmareactive.rdma.spi.ConnectRequest> requests =
            new java.util.concurrent.LinkedBlockingQueue<>();
        reactor.core.Disposable taking = listener.incoming().subscribe(requests::add);
        for (int i = 0; i < 2; i++) {
          Endpoint client = cp.connect(at, new EndpointOptions(4, 4, 0, new byte[0]), WAIT).block(WAIT);
          endpoints.add(client);
          clientsEp.add(client);
          Mono<Void> connecting = client.establish().cache();
          connecting.subscribe(null, e -> {});
          io.rdmareactive.rdma.spi.ConnectRequest request = requests.poll(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
          assertThat(request).as("connect request %d", i).isNotNull();
          Endpoint server = request.createEndpoint();
          endpoints.add(server);
          servers.add(server);
          assertThat(server.protectionDomain()).isSameAs(pd);
          assertThat(server.sharedReceiveQueue()).isSameAs(srq);
          assertThat(client.sharedReceiveQueue()).isNull();
          server.establish().block(WAIT);
          connecting.block(WAIT);
        }
        assertThat(acquired).hasValue(2);
        for (int i = 0; i < 2; i++) {
          Endpoint client = clientsEp.get(i);
          java.lang.foreign.MemorySegment payload = arena.allocate(64, 64);
          payload.fill((byte) ('a' + i));
          io.rdmareactive.rdma.verbs.MemoryRegion mr = client.protectionDomain().registerMemory(payload,
              io.rdmareactive.rdma.verbs.Access.local());
          client.queuePair().postSend(new io.rdmareactive.rdma.verbs.SendRequest().send(100 + i, mr, 0, 10 + i));
          awaitCompletion(client, wc -> assertThat(wc.status()).isEqualTo(io.rdmareactive.rdma.verbs.WorkCompletion.Status.SUCCESS));
          mr.close();
          Endpoint server = servers.get(i);
          char expected = (char) ('a' + i);
          int length = 10 + i;
          awaitCompletion(server, wc -> {
            assertThat(wc.status()).isEqualTo(io.rdmareactive.rdma.verbs.WorkCompletion.Status.SUCCESS);
            assertThat(wc.qpNumber()).as("the QP of the endpoint the SEND reached").isEqualTo(server.queuePair().qpNumber());
            assertThat(wc.byteLength()).isEqualTo(length);
            long offset = wc.wrId() * 1024;
            assertThat((char) slab.get(java.lang.foreign.ValueLayout.JAVA_BYTE, offset)).isEqualTo(expected);
          });
        }
        for (Endpoint e : endpoints) {
          e.close();
        }
        assertThat(released).as("SRQ given back once per server endpoint").hasValue(2);
        taking.dispose();
      }
      slabRegion.close();
      srq.close();
    } finally {
      for (Endpoint e : endpoints) {
        e.close();
      }
    }
    StepVerifier.create(loops.disposeLater()).verifyComplete();
    assertThat(pd.isClosed()).isTrue();
    oneMoreConnection();
  }

  /** Polls {@code endpoint}'s CQ until one completion came, and checks it. */
  private static void awaitCompletion(Endpoint endpoint,
      java.util.function.Consumer<io.rdmareactive.rdma.verbs.WorkCompletion> check) {
    AtomicReference<io.rdmareactive.rdma.verbs.WorkCompletion> got = new AtomicReference<>();
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (got.get() == null && System.nanoTime() < deadline) {
      endpoint.completionQueue().poll(1, wc -> got.set(wc.toWorkCompletion()));
      if (got.get() == null) {
        LockSupport.parkNanos(1_000_000);
      }
    }
    assertThat(got.get()).as("a completion on %s", endpoint).isNotNull();
    check.accept(got.get());
  }

  /**
   * N clients and their server connections on {@code loops}: each echoes and checks messages;
   * completions run on the loops' threads only, their number stays at most the loop count
   * whatever N, and when all are closed the loops hold no channel and their threads end.
   */
  void echoOnLoops(RdmaLoopResources loops, String threadPrefix) {
    echoOnLoops(loops, threadPrefix, fixture().loopConnections());
  }

  /** Returns the JVM's thread count at its peak (all connections open and echoing). */
  int echoOnLoops(RdmaLoopResources loops, String threadPrefix, int n) {
    long t0 = System.nanoTime();
    java.util.Set<String> serverThreads = java.util.concurrent.ConcurrentHashMap.newKeySet();
    List<RdmaConnection> served = new java.util.concurrent.CopyOnWriteArrayList<>();
    DisposableRdmaServer server = bind(server().runOn(loops).option(RdmaOption.BUFFER_COUNT, 4)
        .option(RdmaOption.BUFFER_SIZE, 1024).doOnConnection(served::add)
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
    assertThat(loops.protectionDomainCount()).as("protection domains of %d connections' both ends on one device", n)
        .isEqualTo(1);
    int peak = Thread.activeCount();
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
    long giveUps = java.util.stream.Stream.concat(conns.stream(), served.stream())
        .mapToLong(c -> c.statistics().flushGiveUps()).sum();
    assertThat(giveUps).as("closes of the %d client and %d server connections that gave up on flush completions",
        conns.size(), served.size()).isZero();
    StepVerifier.create(loops.disposeLater()).verifyComplete();
    assertThat(loops.channelCount()).isZero();
    assertThat(loops.protectionDomainCount()).as("protection domains after every connection closed").isZero();
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (loopThreads(threadPrefix) > 0 && System.nanoTime() < deadline) {
      LockSupport.parkNanos(10_000_000);
    }
    assertThat(loopThreads(threadPrefix)).as("loop threads after every connection closed").isZero();
    assertThatThrownBy(() -> client.connectNow()).hasMessageContaining("disposed");
    System.out.printf("%s: %d connections on %s: connect+echo %d ms, close %d ms, %d threads at peak%n", fixture().provider(), n,
        loops, (t1 - t0) / 1_000_000, (System.nanoTime() - t1) / 1_000_000, peak);
    return peak;
  }

  static long loopThreads(String prefix) {
    return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(prefix)).count();
  }
}
