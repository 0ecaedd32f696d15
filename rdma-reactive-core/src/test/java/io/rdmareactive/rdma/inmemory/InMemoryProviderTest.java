package io.rdmareactive.rdma.inmemory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.device.RdmaDevices;
import io.rdmareactive.rdma.RdmaException;
import io.rdmareactive.rdma.ResourceBusyException;
import io.rdmareactive.rdma.conformance.Loopback;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.AsyncEvent;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.CompletionStreamOptions;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.QueuePairConnectOptions;
import io.rdmareactive.rdma.verbs.QueuePairOptions;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.ReceiveRequest;
import io.rdmareactive.rdma.verbs.SendRequest;
import io.rdmareactive.rdma.verbs.SharedReceiveQueue;
import io.rdmareactive.rdma.verbs.SharedReceiveQueueOptions;
import io.rdmareactive.rdma.verbs.XrcDomain;
import io.rdmareactive.rdma.verbs.XrcDomainOptions;
import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.spi.Endpoint;
import io.rdmareactive.rdma.spi.EndpointOptions;
import io.rdmareactive.rdma.spi.Listener;
import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.test.StepVerifier;

/** In-memory specifics: configuration, counters, overflow, events, XRC sharing across contexts. */
class InMemoryProviderTest extends InMemoryFabricTest {
  @Test
  void privateFabricsSeeNeitherEachOthersObjectsNorListeners() {
    InMemoryProvider other = InMemoryProvider.create("mem0");
    Map<String, Integer> shared = new InMemoryProvider().liveObjects();
    assertThat(before).as("a fresh private fabric").isEmpty();
    assertThat(provider.liveObjects()).containsEntry("context", 1);
    assertThat(other.liveObjects()).as("another private fabric's counts").isEmpty();
    assertThat(new InMemoryProvider().liveObjects()).as("the process-wide fabric's counts").isEqualTo(shared);

    InetSocketAddress any = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
    EndpointOptions options = new EndpointOptions(4, 4, 0, new byte[0]);
    try (Listener l = provider.connections().listen(any, options);
         Listener samePort = other.connections().listen(l.boundAddress(), options)) {
      assertThat(samePort.boundAddress().getPort()).as("the same port is free on another fabric")
          .isEqualTo(l.boundAddress().getPort());
      samePort.close();
      Endpoint stranger = other.connections().connect(l.boundAddress(), options, Duration.ofSeconds(5)).block();
      try {
        StepVerifier.create(stranger.establish())
            .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(ConnectionException.class)
                .satisfies(c -> assertThat(((ConnectionException) c).reason())
                    .isEqualTo(ConnectionException.Reason.REFUSED)))
            .verify(Duration.ofSeconds(5));
      } finally {
        stranger.close();
      }
      Endpoint local = provider.connections().connect(l.boundAddress(), options, Duration.ofSeconds(5)).block();
      try {
        StepVerifier.create(l.incoming().take(1).map(io.rdmareactive.rdma.spi.ConnectRequest::createEndpoint)
                .doOnNext(Endpoint::close))
            .then(() -> local.establish().subscribe(v -> {}, e -> {}))
            .expectNextCount(1)
            .verifyComplete();
      } finally {
        local.close();
      }
    }
    assertThat(other.liveObjects()).as("the other fabric after closing its endpoint and listener").isEmpty();
  }

  @Test
  void isFoundThroughServiceLoaderAndListsItsDevices() {
    assertThat(RdmaDevices.provider("in-memory")).isInstanceOf(InMemoryProvider.class);
    assertThat(RdmaDevices.provider("auto").name()).as("no native provider on core's classpath")
        .isEqualTo("in-memory");
    InMemoryProvider p = new InMemoryProvider("a, b:basic");
    assertThat(p.devices()).extracting(d -> d.name()).containsExactly("a", "b");
    assertThatThrownBy(() -> p.open("zz")).isInstanceOf(NativeCallException.class)
        .satisfies(e -> assertThat(((NativeCallException) e).errno()).isEqualTo(NativeCallException.ENODEV));
    assertThatThrownBy(() -> new InMemoryProvider("x:fancy")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("fancy");
  }

  @Test
  void countsLiveObjectsByType() {
    ProtectionDomain pd = context.allocateProtectionDomain();
    CompletionQueue cq = context.createCompletionQueue(8, null);
    QueuePair qp = pd.createQueuePair(QueuePairOptions.reliable(cq, 2));
    Map<String, Integer> live = provider.liveObjects();
    assertThat(live.get("pd")).isEqualTo(before.getOrDefault("pd", 0) + 1);
    assertThat(live.get("qp")).isEqualTo(before.getOrDefault("qp", 0) + 1);
    assertThat(live.get("context")).isEqualTo(before.getOrDefault("context", 0) + 1);
    qp.close();
    cq.close();
    pd.close();
  }

  @Test
  void postingBeforeConnectingOrBeyondTheQueueDepthFailsWithErrno() {
    try (Loopback l = new Loopback(context, 0, 2, false)) {
      ProtectionDomain pd = l.pd;
      CompletionQueue freshCq = context.createCompletionQueue(8, null);
      QueuePair fresh = pd.createQueuePair(QueuePairOptions.reliable(freshCq, 1));
      try {
        assertThatThrownBy(() -> fresh.postSend(new SendRequest().send(1, l.mr, 0, 8)))
            .isInstanceOf(NativeCallException.class).hasMessageContaining("ibv_post_send")
            .satisfies(e -> assertThat(((NativeCallException) e).errno()).isEqualTo(NativeCallException.EINVAL));
      } finally {
        fresh.close();
        freshCq.close();
      }
      l.write(1);
      l.write(2);
      assertThatThrownBy(() -> l.write(3)).isInstanceOf(NativeCallException.class)
          .satisfies(e -> assertThat(((NativeCallException) e).errno()).isEqualTo(NativeCallException.ENOMEM));
      assertThat(l.pollAtLeast(1)).hasSize(1);
      l.write(3); // polling gave the slot back
      assertThat(l.pollAtLeast(2)).hasSize(2);
    }
  }

  @Test
  void overflowingACompletionQueueRaisesCqErrAndFailsPolls() {
    ProtectionDomain pd = context.allocateProtectionDomain();
    CompletionQueue sendCq = context.createCompletionQueue(64, null);
    CompletionQueue small = context.createCompletionQueue(2, null);
    SharedReceiveQueue srq = pd.createSharedReceiveQueue(SharedReceiveQueueOptions.of(8));
    Arena arena = Arena.ofConfined();
    var mr = pd.registerMemory(arena.allocate(4096), Access.remote());
    QueuePair a = pd.createQueuePair(QueuePairOptions.reliable(sendCq, 8));
    // an SRQ's receives are not counted against the receive CQ: the one way to overflow it
    QueuePair b = pd.createQueuePair(QueuePairOptions.reliable(sendCq, 4).withReceiveCompletionQueue(small)
        .withSharedReceiveQueue(srq));
    try {
      QueuePairConnectOptions o = QueuePairConnectOptions.defaults();
      a.connect(b.localAddress(o), o);
      b.connect(a.localAddress(o), o);
      for (int i = 0; i < 3; i++) {
        srq.postReceive(new ReceiveRequest().set(i, mr, 64L * i, 64));
      }
      StepVerifier.create(context.asyncEvents().take(1))
          .then(() -> {
            for (int i = 0; i < 3; i++) {
              a.postSend(new SendRequest().send(10 + i, mr, 1024, 8));
            }
          })
          .assertNext(e -> assertThat(e.type()).isEqualTo(AsyncEvent.Type.CQ_ERR))
          .expectComplete()
          .verify(Duration.ofSeconds(5));
      assertThatThrownBy(() -> small.poll(1, wc -> {})).isInstanceOf(RdmaException.class)
          .hasMessageContaining("CQ overflow");
      StepVerifier.create(small.completions(CompletionStreamOptions.defaults()
              .withMode(CompletionStreamOptions.Mode.BUSY_POLL)))
          .expectErrorSatisfies(e -> assertThat(e).hasMessageContaining("CQ overflow"))
          .verify(Duration.ofSeconds(5));
    } finally {
      a.close();
      b.close();
      mr.close();
      arena.close();
      srq.close();
      small.close();
      sendCq.close();
      pd.close();
    }
  }

  @Test
  void aQueueWithUnacknowledgedEventsRefusesToClose() {
    Loopback l = new Loopback(context, 0, 4, true);
    try {
      l.cq.requestNotification(false);
      l.write(1);
      assertThat(l.channel.awaitEvent(Duration.ofSeconds(1))).isTrue();
      assertThat(l.channel.nextEvent()).isSameAs(l.cq);
      l.a.close();
      l.b.close();
      assertThatThrownBy(l.cq::close).isInstanceOf(ResourceBusyException.class).hasMessageContaining("unacknowledged");
      assertThatThrownBy(() -> l.cq.acknowledgeEvents(2)).isInstanceOf(IllegalArgumentException.class);
      l.cq.acknowledgeEvents(1);
    } finally {
      l.close();
    }
  }

  @Test
  void xrcDomainsAreSharedAcrossContextsUntilTheLastHandleCloses(@TempDir Path dir) {
    Path file = dir.resolve("domain");
    assertThatThrownBy(() -> context.openXrcDomain(XrcDomainOptions.existing(file)))
        .isInstanceOf(NativeCallException.class)
        .satisfies(e -> assertThat(((NativeCallException) e).errno()).isEqualTo(NativeCallException.ENOENT));
    XrcDomain first = context.openXrcDomain(XrcDomainOptions.shared(file));
    try (RdmaContext other = provider.open("mem0")) {
      XrcDomain second = other.openXrcDomain(XrcDomainOptions.existing(file));
      QueuePair target = first.createReceiveQueuePair();
      QueuePair opened = second.openQueuePair(target.qpNumber());
      XrcDomain unrelated = other.openXrcDomain(XrcDomainOptions.privateDomain());
      assertThatThrownBy(() -> unrelated.openQueuePair(target.qpNumber()))
          .isInstanceOf(NativeCallException.class).hasMessageContaining("ibv_open_qp");
      unrelated.close();
      target.close();
      assertThat(opened.state()).as("the opened handle keeps the QP").isNotNull();
      opened.close();
      first.close();
      XrcDomain third = other.openXrcDomain(XrcDomainOptions.existing(file));
      third.close();
      second.close();
      assertThatThrownBy(() -> other.openXrcDomain(XrcDomainOptions.existing(file)))
          .as("the last handle took the domain with it").isInstanceOf(NativeCallException.class);
    }
  }
}
