package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.conformance.LeakCheck;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.AfterMethod;
import org.testng.annotations.BeforeMethod;
import reactor.core.publisher.Flux;

/**
 * Proves that a connection's inbound publisher ({@link RdmaInbound#receive()}) follows the
 * Reactive Streams specification: the TCK's {@link PublisherVerification}, provider-neutral (the
 * in-memory provider runs it on the host, the native module subclasses it in TestNG group
 * {@code native} to run it over Soft-RoCE). A publisher of {@code n} elements is the client side
 * of a fresh connection whose server sends {@code n} messages, lazily as credits allow, and then
 * closes, which completes the inbound; the failed publisher is {@code receive()} of a disposed
 * connection. Every server and connection is freed after each test, and no verbs object
 * outlives it.
 *
 * <p>The TCK's subscribers never {@linkplain RdmaMessage#release() release} messages; no test
 * takes anywhere near {@link RdmaOption#BUFFER_COUNT}'s 64 of them, and closing frees the buffers
 * anyway. {@code receive()} takes one subscriber (a second gets onSubscribe, then
 * onError(IllegalStateException)), so the TCK itself skips the optional multi-subscriber rules 1.11.
 */
public abstract class AbstractInboundPublisherTckTest extends PublisherVerification<RdmaMessage> {
  /** The provider under test. */
  protected abstract TransportFixture fixture();
  private static final Duration WAIT = Duration.ofSeconds(30);

  private final List<DisposableRdmaServer> servers = new ArrayList<>();
  private final List<RdmaConnection> clients = new ArrayList<>();
  private Map<String, Integer> liveBefore = Map.of();

  /**
   * @param timeoutMillis the TCK's default timeout (also how long {@code verifyNoAsyncErrors()} waits)
   * @param noSignalMillis how long the TCK waits to see that no signal comes
   * @param gcTimeoutMillis how long after a cancel the publisher may still hold its subscriber (rule 3.13)
   */
  protected AbstractInboundPublisherTckTest(long timeoutMillis, long noSignalMillis, long gcTimeoutMillis) {
    super(new TestEnvironment(timeoutMillis, noSignalMillis), gcTimeoutMillis);
  }

  @BeforeMethod
  public void snapshotLiveObjects() {
    liveBefore = fixture().liveResources();
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
    LeakCheck.awaitSame(() -> fixture().liveResources(), liveBefore, WAIT);
  }

  /** A connection whose peer sends {@code elements} messages and then closes. */
  @Override
  public Publisher<RdmaMessage> createPublisher(long elements) {
    DisposableRdmaServer server = server()
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
    DisposableRdmaServer server = server().bindNow();
    servers.add(server);
    RdmaConnection c = connect(server);
    c.dispose();
    c.onDispose().block(WAIT);
    return c.inbound().receive();
  }

  private RdmaServer server() {
    return RdmaServer.create().host(fixture().host()).port(0).option(RdmaOption.PROVIDER, fixture().provider())
        .option(RdmaOption.SHARED_RECEIVE_QUEUE, TransportSuite.SHARED_RECEIVE_QUEUE);
  }

  private RdmaConnection connect(DisposableRdmaServer server) {
    RdmaConnection c = RdmaClient.create().host(fixture().host()).port(server.port())
        .option(RdmaOption.PROVIDER, fixture().provider())
        .option(RdmaOption.SHARED_RECEIVE_QUEUE, TransportSuite.SHARED_RECEIVE_QUEUE)
        .connectTimeout(Duration.ofSeconds(10)).connectNow();
    clients.add(c);
    return c;
  }
}
