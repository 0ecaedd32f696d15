package io.rdmareactive.rdma.rdmacore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.conformance.TestSettings;
import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.spi.ConnectionProvider;
import io.rdmareactive.rdma.spi.Endpoint;
import io.rdmareactive.rdma.spi.EndpointOptions;
import io.rdmareactive.rdma.spi.Listener;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.QueuePairState;
import io.rdmareactive.rdma.verbs.ReceiveRequest;
import io.rdmareactive.rdma.verbs.SendRequest;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The connection SPI over librdmacm (Soft-RoCE VM: rxe0 on dummy0, 10.0.0.1; override with
 * RDMA_TEST_ADDRESS): listen, connect, establish, a SEND each way through the endpoints' QPs and
 * CQs, disconnect seen by the peer, typed errors for bad input, and nothing left in the kernel.
 */
@Tag("native")
class NativeConnectionProviderTest {
  static final String HOST = TestSettings.testAddress();
  private static final Duration WAIT = Duration.ofSeconds(30);

  private final ConnectionProvider cp = new NativeProvider().connections();
  private Map<String, Integer> before = Map.of();
  private int channelsBefore;

  /** librdmacm opens a device's context on first use and keeps it for the process: open it before counting. */
  @BeforeAll
  static void warmUp() {
    NativeTestSupport.deviceName();
    openCmDeviceContext();
  }

  static void openCmDeviceContext() {
    new NativeProvider().connections()
        .listen(new InetSocketAddress(HOST, 0), new EndpointOptions(1, 1, 0, new byte[0])).close();
  }

  @BeforeEach
  void snapshot() {
    NativeTestSupport.deviceName(); // skips, saying why, where there is no device
    before = KernelResources.live();
    channelsBefore = KernelResources.cmEventChannels();
  }

  @AfterEach
  void everythingFreed() {
    // The event loop closes on its own thread once idle: give it a moment.
    long deadline = System.nanoTime() + WAIT.toNanos();
    while ((KernelResources.cmEventChannels() != channelsBefore || !KernelResources.live().equals(before))
        && System.nanoTime() < deadline) {
      LockSupport.parkNanos(50_000_000);
    }
    assertThat(KernelResources.cmEventChannels()).as("open rdma_cm event channels (the loop's included)")
        .isEqualTo(channelsBefore);
    assertThat(KernelResources.live()).as("kernel objects of this JVM").isEqualTo(before);
  }

  @Test
  void providerIsTheNativeOne() {
    assertThat(cp).isSameAs(new NativeProvider().connections()).isInstanceOf(NativeConnectionProvider.class);
  }

  /**
   * With nothing connecting, a CM event loop sleeps until an event, a task or its close wakes it:
   * an idle process's CM thread does not wake (it turned every 100 ms, taking a vCPU from a busy
   * poller now and then). Counted by the kernel, in the voluntary context switches of a loop of
   * the test's own, so that no other test's loop or connect attempt is counted.
   */
  @Test
  void anIdleCmLoopDoesNotWake() throws Exception {
    Map<String, Long> others = cmThreadSwitches();
    try (CmEventLoop loop = new CmEventLoop()) {
      Map<String, Long> all = cmThreadSwitches();
      all.keySet().removeAll(others.keySet());
      assertThat(all).as("the new loop's rdma-cm thread").hasSize(1);
      String thread = all.keySet().iterator().next();
      Thread.sleep(200); // time for the new thread to reach its first poll(2)
      long before = cmThreadSwitches().get(thread);
      Thread.sleep(700);
      assertThat(cmThreadSwitches().get(thread) - before).as("wakeups of the idle loop's thread in 700 ms")
          .isLessThanOrEqualTo(1);
    }
  }

  /** Voluntary context switches of this JVM's rdma-cm threads, by thread id (Linux /proc). */
  private static Map<String, Long> cmThreadSwitches() throws java.io.IOException {
    Map<String, Long> switches = new java.util.HashMap<>();
    try (var tasks = java.nio.file.Files.list(java.nio.file.Path.of("/proc/self/task"))) {
      for (java.nio.file.Path task : tasks.toList()) {
        try {
          if (!java.nio.file.Files.readString(task.resolve("comm")).startsWith("rdma-cm-")) {
            continue;
          }
          for (String line : java.nio.file.Files.readAllLines(task.resolve("status"))) {
            if (line.startsWith("voluntary_ctxt_switches:")) {
              switches.put(task.getFileName().toString(), Long.parseLong(line.substring(line.indexOf(':') + 1).trim()));
            }
          }
        } catch (java.nio.file.NoSuchFileException gone) {
          // the thread ended between the listing and the read
        }
      }
    }
    return switches;
  }

  @Test
  void listenConnectEstablishSendBothWaysAndDisconnect() {
    byte[] hello = "client-hello".getBytes(StandardCharsets.US_ASCII);
    byte[] welcome = "server-welcome".getBytes(StandardCharsets.US_ASCII);
    try (Listener listener = cp.listen(new InetSocketAddress(HOST, 0), new EndpointOptions(4, 4, 0, welcome));
         Arena arena = Arena.ofShared()) {
      int port = listener.boundAddress().getPort();
      assertThat(port).isPositive();
      assertThat(listener.boundAddress().getAddress().getHostAddress()).isEqualTo(HOST);
      // The leak check is not vacuous: the kernel lists the listening id under this JVM.
      assertThat(KernelResources.ofThisProcess("cm_id")).anyMatch(l -> l.contains(":" + port));

      AtomicReference<Endpoint> clientRef = new AtomicReference<>();
      AtomicReference<Endpoint> serverRef = new AtomicReference<>();
      StepVerifier.create(cp.connect(new InetSocketAddress(HOST, port), new EndpointOptions(4, 4, 0, hello), WAIT))
          .consumeNextWith(clientRef::set)
          .expectComplete()
          .verify(WAIT);
      Endpoint client = clientRef.get();
      // Resolved and created, not connected: QP in INIT, no private data from the peer yet.
      assertThat(client.queuePair().state()).isEqualTo(QueuePairState.INIT);
      assertThat(client.remotePrivateData()).isEmpty();
      assertThat(client.completionQueue().depth()).isGreaterThanOrEqualTo(8);
      assertThat(client.completionQueue().channel()).isNotNull();

      // Nothing reaches the listener before establish (rdma_connect sends the request).
      Mono<Endpoint> incoming = listener.incoming().next()
          .publishOn(reactor.core.scheduler.Schedulers.boundedElastic()) // building blocks: off rdma-cm
          .map(io.rdmareactive.rdma.spi.ConnectRequest::createEndpoint).cache();
      MemorySegment cbuf = arena.allocate(64);
      MemorySegment sbuf = arena.allocate(64);
      try (MemoryRegion cmr = client.protectionDomain().registerMemory(cbuf, Access.local())) {
        client.queuePair().postReceive(new ReceiveRequest().set(1, cmr, 0, 32)); // receives may go before connecting
        StepVerifier.create(Mono.when(client.establish(), incoming.doOnNext(serverRef::set)
                .flatMap(server -> {
                  // The passive side: the request's private data from the start, QP in INIT too.
                  assertThat(Arrays.copyOf(server.remotePrivateData(), hello.length)).isEqualTo(hello);
                  assertThat(server.queuePair().state()).isEqualTo(QueuePairState.INIT);
                  return server.establish();
                })))
            .expectComplete()
            .verify(WAIT);
        Endpoint server = serverRef.get();
        assertThat(Arrays.copyOf(client.remotePrivateData(), welcome.length)).isEqualTo(welcome);
        assertThat(client.queuePair().state()).isEqualTo(QueuePairState.RTS);
        assertThat(server.queuePair().state()).isEqualTo(QueuePairState.RTS);
        assertThat(KernelResources.ofThisProcess("qp").size()).as("two QPs of ours while connected")
            .isGreaterThanOrEqualTo(before.getOrDefault("qp", 0) + 2);

        try (MemoryRegion smr = server.protectionDomain().registerMemory(sbuf, Access.local())) {
          server.queuePair().postReceive(new ReceiveRequest().set(2, smr, 0, 32));
          // Client -> server: the server's CQ reports the receive, the client's the (signaled) send.
          put(cbuf, 32, "ping");
          Mono<List<WorkCompletion>> serverSaw = server.completionQueue().completions().take(1).collectList();
          Mono<List<WorkCompletion>> clientSent = client.completionQueue().completions().take(1).collectList();
          StepVerifier.create(Mono.zip(serverSaw, clientSent))
              .then(() -> client.queuePair().postSend(new SendRequest().send(10, cmr, 32, 4)
                  .flags(SendRequest.SIGNALED)))
              .assertNext(t -> {
                WorkCompletion recv = t.getT1().getFirst();
                assertThat(recv.isSuccess()).as("%s", recv).isTrue();
                assertThat(recv.opcode()).isEqualTo(WorkCompletion.Opcode.RECV);
                assertThat(recv.wrId()).isEqualTo(2);
                assertThat(recv.byteLength()).isEqualTo(4);
                WorkCompletion sent = t.getT2().getFirst();
                assertThat(sent.isSuccess()).as("%s", sent).isTrue();
                assertThat(sent.opcode()).isEqualTo(WorkCompletion.Opcode.SEND);
                assertThat(sent.wrId()).isEqualTo(10);
              })
              .expectComplete()
              .verify(WAIT);
          assertThat(get(sbuf, 0, 4)).isEqualTo("ping");

          // Server -> client.
          put(sbuf, 32, "pong!");
          StepVerifier.create(Mono.zip(client.completionQueue().completions().take(1).collectList(),
                  server.completionQueue().completions().take(1).collectList()))
              .then(() -> server.queuePair().postSend(new SendRequest().send(20, smr, 32, 5)
                  .flags(SendRequest.SIGNALED)))
              .assertNext(t -> {
                WorkCompletion recv = t.getT1().getFirst();
                assertThat(recv.isSuccess()).as("%s", recv).isTrue();
                assertThat(recv.wrId()).isEqualTo(1);
                assertThat(recv.byteLength()).isEqualTo(5);
                assertThat(t.getT2().getFirst().wrId()).isEqualTo(20);
              })
              .expectComplete()
              .verify(WAIT);
          assertThat(get(cbuf, 0, 5)).isEqualTo("pong!");

          // The client disconnects: both sides see it, the server without doing anything.
          server.queuePair().postReceive(new ReceiveRequest().set(3, smr, 0, 32));
          client.disconnect();
          client.disconnect(); // idempotent
          StepVerifier.create(client.onDisconnect()).expectComplete().verify(WAIT);
          StepVerifier.create(server.onDisconnect()).expectComplete().verify(WAIT);
          // The server answers with its own disconnect (after its last post): its QP goes to
          // ERROR then, and its outstanding receive is flushed.
          server.disconnect();
          StepVerifier.create(server.completionQueue().completions().take(1))
              .assertNext(wc -> {
                assertThat(wc.wrId()).isEqualTo(3);
                assertThat(wc.status()).isEqualTo(WorkCompletion.Status.WR_FLUSH_ERR);
              })
              .expectComplete()
              .verify(WAIT);
          assertThat(server.queuePair().state()).isEqualTo(QueuePairState.ERROR);
          server.disconnect(); // no longer connected: no error
          // Memory still registered on its PD: the endpoint refuses to go (typed, nothing freed).
          assertThatThrownBy(server::close).isInstanceOf(io.rdmareactive.rdma.ResourceBusyException.class);
          assertThat(server.isClosed()).isFalse();
          assertThat(server.queuePair().state()).isEqualTo(QueuePairState.ERROR);
        }
        server.close();
        server.close();
      }
      client.close();
      assertThat(client.isClosed()).isTrue();
      assertThatThrownBy(() -> client.queuePair().postSend(new SendRequest()))
          .isInstanceOf(io.rdmareactive.rdma.ResourceClosedException.class);
    }
  }

  @Test
  void connectingToAPortNobodyListensOnIsRefusedPromptly() {
    int port;
    try (Listener gone = cp.listen(new InetSocketAddress(HOST, 0), new EndpointOptions(1, 1, 0, new byte[0]))) {
      port = gone.boundAddress().getPort();
    }
    long start = System.nanoTime();
    AtomicReference<Endpoint> ep = new AtomicReference<>();
    StepVerifier.create(cp.connect(new InetSocketAddress(HOST, port), new EndpointOptions(2, 2, 0, new byte[0]), WAIT)
            .doOnNext(ep::set)
            .flatMap(Endpoint::establish))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(ConnectionException.class).hasMessageContaining(String.valueOf(port));
          assertThat(((ConnectionException) e).reason()).isEqualTo(ConnectionException.Reason.REFUSED);
        })
        .verify(WAIT);
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
    StepVerifier.create(ep.get().onDisconnect()).expectComplete().verify(WAIT);
    ep.get().close();
  }

  @Test
  void listeningOnAPortInUseFailsWithAddressInUse() {
    try (Listener first = cp.listen(new InetSocketAddress(HOST, 0), new EndpointOptions(1, 1, 0, new byte[0]))) {
      InetSocketAddress taken = first.boundAddress();
      assertThatThrownBy(() -> cp.listen(taken, new EndpointOptions(1, 1, 0, new byte[0])))
          .isInstanceOfSatisfying(ConnectionException.class,
              e -> assertThat(e.reason()).isEqualTo(ConnectionException.Reason.ADDRESS_IN_USE))
          .hasMessageContaining(String.valueOf(taken.getPort()));
      assertThat(first.isClosed()).isFalse();
    }
  }

  @Test
  void aConnectWhoseTimeoutRunsOutFailsWithTimedOut() {
    // Nothing is slow enough to resolve on dummy0 (NOARP); a timeout that has run out before the
    // loop starts resolving is the deterministic case of the same check.
    StepVerifier.create(cp.connect(new InetSocketAddress(HOST, 7471), new EndpointOptions(1, 1, 0, new byte[0]),
            Duration.ofNanos(1)))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(ConnectionException.class);
          assertThat(((ConnectionException) e).reason()).isEqualTo(ConnectionException.Reason.TIMED_OUT);
        })
        .verify(WAIT);
  }

  @Test
  void aListenerThatNeverTakesARequestLeavesTheInitiatorWaitingAndClosingRefusesIt() {
    Listener listener = cp.listen(new InetSocketAddress(HOST, 0), new EndpointOptions(2, 2, 0, new byte[0]));
    AtomicReference<Endpoint> ep = new AtomicReference<>();
    StepVerifier.create(cp.connect(listener.boundAddress(), new EndpointOptions(2, 2, 0, new byte[0]), WAIT)
            .doOnNext(ep::set)
            .flatMap(Endpoint::establish))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(500)) // pending at the listener: no demand, no answer
        .then(listener::close) // closing rejects what is pending
        .expectErrorSatisfies(e -> assertThat(((ConnectionException) e).reason())
            .isEqualTo(ConnectionException.Reason.REFUSED))
        .verify(WAIT);
    ep.get().close();
  }

  /**
   * Building a request's endpoint blocks (PD, CQ, QP), and the rdma-cm thread serves every id of
   * the process: on that thread it fails typed, and the request is refused and freed, not built.
   */
  @Test
  void buildingAnEndpointOnTheCmThreadFailsTypedAndRefusesTheRequest() {
    long built = NativeConnectionProvider.INSTANCE.passiveEndpointsBuilt();
    try (Listener listener = cp.listen(new InetSocketAddress(HOST, 0), new EndpointOptions(2, 2, 0, new byte[0]))) {
      AtomicReference<Throwable> onCmThread = new AtomicReference<>();
      AtomicReference<String> thread = new AtomicReference<>();
      listener.incoming().subscribe(r -> { // delivered on rdma-cm: the request arrives with its event
        thread.set(Thread.currentThread().getName());
        try {
          r.createEndpoint().close();
        } catch (RuntimeException e) {
          onCmThread.set(e);
        }
      });
      Endpoint ep = cp.connect(listener.boundAddress(), new EndpointOptions(2, 2, 0, new byte[0]), WAIT).block(WAIT);
      try {
        StepVerifier.create(ep.establish())
            .expectErrorSatisfies(e -> assertThat(((ConnectionException) e).reason())
                .isEqualTo(ConnectionException.Reason.REFUSED))
            .verify(WAIT);
      } finally {
        ep.close();
      }
      assertThat(thread.get()).startsWith("rdma-cm");
      assertThat(onCmThread.get()).isInstanceOf(IllegalStateException.class).hasMessageContaining("rdma-cm thread");
    }
    assertThat(NativeConnectionProvider.INSTANCE.passiveEndpointsBuilt()).isEqualTo(built);
  }

  @Test
  void cancellingAConnectFreesWhatItCreated() {
    try (Listener listener = cp.listen(new InetSocketAddress(HOST, 0), new EndpointOptions(2, 2, 0, new byte[0]))) {
      StepVerifier.create(cp.connect(listener.boundAddress(), new EndpointOptions(2, 2, 0, new byte[0]), WAIT))
          .thenCancel()
          .verify(WAIT);
    }
    // everythingFreed: the half-resolved id is destroyed.
  }

  @Test
  void anUnresolvedAddressFailsWithUnresolved() {
    InetSocketAddress unresolved = InetSocketAddress.createUnresolved("no-such-host.invalid", 7471);
    StepVerifier.create(cp.connect(unresolved, new EndpointOptions(1, 1, 0, new byte[0]), WAIT))
        .expectErrorSatisfies(e -> assertThat(((ConnectionException) e).reason())
            .isEqualTo(ConnectionException.Reason.UNRESOLVED))
        .verify(WAIT);
    assertThatThrownBy(() -> cp.listen(unresolved, new EndpointOptions(1, 1, 0, new byte[0])))
        .isInstanceOfSatisfying(ConnectionException.class,
            e -> assertThat(e.reason()).isEqualTo(ConnectionException.Reason.UNRESOLVED));
  }

  private static void put(MemorySegment seg, long offset, String s) {
    byte[] b = s.getBytes(StandardCharsets.US_ASCII);
    MemorySegment.copy(b, 0, seg, ValueLayout.JAVA_BYTE, offset, b.length);
  }

  private static String get(MemorySegment seg, long offset, int length) {
    return new String(seg.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.US_ASCII);
  }
}
