package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.AfterMethod;
import org.testng.annotations.BeforeMethod;
import reactor.core.publisher.Flux;

/**
 * Proves that a connection's inbound publisher ({@link RdmaInbound#receive()}) follows the
 * Reactive Streams specification: the TCK's {@link PublisherVerification} on the in-memory
 * provider. A publisher of {@code n} elements is the client side of a fresh connection whose
 * server sends {@code n} messages, lazily as credits allow, and then closes, which completes the
 * inbound; the failed publisher is {@code receive()} of a disposed connection. Every server and
 * connection is freed after each test, and no in-memory verbs object outlives it.
 *
 * <p>The TCK's subscribers never {@linkplain RdmaMessage#release() release} messages; no test
 * takes anywhere near {@link RdmaOption#BUFFER_COUNT}'s 64 of them, and closing frees the buffers
 * anyway. {@code receive()} takes one subscriber (a second gets onSubscribe, then
 * onError(IllegalStateException)), so the TCK itself skips the optional multi-subscriber rules 1.11.
 */
public class InboundPublisherTckTest extends PublisherVerification<RdmaMessage> {
  /** Generous for a loaded 2-core machine: also how long {@code verifyNoAsyncErrors()} waits. */
  static final long TIMEOUT_MILLIS = 1_000;
  static final long NO_SIGNAL_MILLIS = 200;
  private static final Duration WAIT = Duration.ofSeconds(30);

  private final List<DisposableRdmaServer> servers = new ArrayList<>();
  private final List<RdmaConnection> clients = new ArrayList<>();
  private Map<String, Integer> liveBefore = Map.of();

  public InboundPublisherTckTest() {
    super(new TestEnvironment(TIMEOUT_MILLIS, NO_SIGNAL_MILLIS));
  }

  @BeforeMethod
  public void snapshotLiveObjects() {
    liveBefore = new InMemoryProvider().liveObjects();
  }

  @AfterMethod(alwaysRun = true)
  public void closeAndCheckNothingLeaked() {
    for (RdmaConnection c : clients) {
      c.dispose();
      c.onDispose().block(WAIT);
    }
    clients.clear();
    for (DisposableRdmaServer s : servers) {
      s.disposeNow(WAIT);
    }
    servers.clear();
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (!new InMemoryProvider().liveObjects().equals(liveBefore) && System.nanoTime() < deadline) {
      LockSupport.parkNanos(5_000_000);
    }
    Map<String, Integer> after = new InMemoryProvider().liveObjects();
    if (!after.equals(liveBefore)) {
      throw new AssertionError("live verbs objects after the test: " + after + ", before: " + liveBefore);
    }
  }

  /** A connection whose peer sends {@code elements} messages and then closes. */
  @Override
  public Publisher<RdmaMessage> createPublisher(long elements) {
    DisposableRdmaServer server = RdmaServer.create().host("127.0.0.1").port(0)
        .option(RdmaOption.PROVIDER, InMemoryProvider.NAME)
        // The handler's end disposes the server's side, which completes our inbound after the rest.
        .handle((in, out) -> out.send(Flux.<byte[], Long>generate(() -> 0L, (i, sink) -> {
          if (i < elements) {
            sink.next(ByteBuffer.allocate(8).putLong(i).array());
          } else {
            sink.complete();
          }
          return i + 1;
        })))
        .bindNow();
    servers.add(server);
    return connect(server).inbound().receive();
  }

  /** {@code receive()} of a disposed connection: onSubscribe, then onError(ResourceClosedException). */
  @Override
  public Publisher<RdmaMessage> createFailedPublisher() {
    DisposableRdmaServer server = RdmaServer.create().host("127.0.0.1").port(0)
        .option(RdmaOption.PROVIDER, InMemoryProvider.NAME).bindNow();
    servers.add(server);
    RdmaConnection c = connect(server);
    c.dispose();
    c.onDispose().block(WAIT);
    return c.inbound().receive();
  }

  private RdmaConnection connect(DisposableRdmaServer server) {
    RdmaConnection c = RdmaClient.create().host("127.0.0.1").port(server.port())
        .option(RdmaOption.PROVIDER, InMemoryProvider.NAME).connectTimeout(Duration.ofSeconds(10)).connectNow();
    clients.add(c);
    return c;
  }
}
