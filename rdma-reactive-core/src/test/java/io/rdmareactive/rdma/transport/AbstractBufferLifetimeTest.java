package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * How long what a user holds of a received message stays readable (issue 24, findings 2 and 8):
 * a message kept past its connection's close reads its original bytes through every path, raw
 * addresses included, because the memory lives until the last view goes; a segment kept past the
 * message's release fails instead of reading the peer's next message in the reused buffer.
 * Provider-neutral: the in-memory provider runs it on the host, a native subclass over rxe.
 */
public abstract class AbstractBufferLifetimeTest {
  protected static final Duration WAIT = Duration.ofSeconds(30);
  private static final int SIZE = 1000;

  private final List<DisposableRdmaServer> servers = new ArrayList<>();
  private final List<RdmaConnection> clients = new ArrayList<>();

  /** The provider under test. */
  protected abstract TransportFixture fixture();

  private String provider() {
    return fixture().provider();
  }

  private String host() {
    return fixture().host();
  }

  @AfterEach
  void close() {
    clients.forEach(c -> {
      c.dispose();
      c.onDispose().block(WAIT);
    });
    servers.forEach(s -> s.disposeNow(WAIT));
  }

  /** A server whose handler hands every message it receives to {@code kept}, unreleased, and asks for more. */
  private DisposableRdmaServer keeping(BlockingQueue<RdmaMessage> kept, BlockingQueue<RdmaConnection> connections) {
    DisposableRdmaServer s = RdmaServer.create().host(host()).port(0).option(RdmaOption.PROVIDER, provider())
        .option(RdmaOption.SHARED_RECEIVE_QUEUE, TransportSuite.SHARED_RECEIVE_QUEUE)
        .handle((in, out) -> {
          connections.add((RdmaConnection) in);
          return in.receive().doOnNext(kept::add).then(Mono.never());
        })
        .bindNow();
    servers.add(s);
    return s;
  }

  private RdmaConnection connect(DisposableRdmaServer server) {
    RdmaConnection c = RdmaClient.create().host(host()).port(server.port()).option(RdmaOption.PROVIDER, provider())
        .option(RdmaOption.SHARED_RECEIVE_QUEUE, TransportSuite.SHARED_RECEIVE_QUEUE)
        .connectTimeout(Duration.ofSeconds(60)) // a cold JVM under TCG
        .connectNow();
    clients.add(c);
    return c;
  }

  private static byte[] bytes(long seed) {
    byte[] b = new byte[SIZE];
    new Random(seed).nextBytes(b);
    return b;
  }

  private static RdmaMessage take(BlockingQueue<RdmaMessage> q) throws InterruptedException {
    RdmaMessage m = q.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
    if (m == null) {
      printThreads();
    }
    assertThat(m).as("a message within %s", WAIT).isNotNull();
    return m;
  }

  /** Where everything stands, for whoever reads a stall's failure. */
  private static void printThreads() {
    Thread.getAllStackTraces().forEach((t, stack) -> System.out.println("stall: " + t.getName() + " "
        + t.getState() + "\n    " + String.join("\n    ", java.util.Arrays.stream(stack).limit(12)
            .map(String::valueOf).toList())));
  }

  /** What is at {@code b}'s address now, read as code that takes a direct buffer's address does. */
  private static byte[] byAddress(ByteBuffer b) {
    return MemorySegment.ofAddress(MemorySegment.ofBuffer(b).address()).reinterpret(b.remaining())
        .toArray(ValueLayout.JAVA_BYTE);
  }

  @Test
  void aMessageKeptPastItsConnectionsCloseReadsItsOriginalBytesThroughEveryPath() throws Exception {
    BlockingQueue<RdmaMessage> kept = new LinkedBlockingQueue<>();
    BlockingQueue<RdmaConnection> accepted = new LinkedBlockingQueue<>();
    DisposableRdmaServer server = keeping(kept, accepted);
    byte[] original = bytes(1);
    RdmaConnection first = connect(server);
    first.outbound().send(Mono.just(original)).block(WAIT);
    RdmaMessage m = take(kept);
    ByteBuffer direct = m.segment().asByteBuffer(); // taken while open, read after the close
    ByteBuffer whole = m.asByteBuffer();
    first.dispose();
    accepted.take().onDispose().block(WAIT);

    // Other connections' messages, into whatever memory the closed one's allocator gave back.
    for (int i = 0; i < 8; i++) {
      RdmaConnection other = connect(server);
      other.outbound().send(Flux.range(0, 64).map(j -> bytes(100 + j))).block(WAIT);
    }
    for (int i = 0; i < 8 * 64; i++) {
      take(kept);
    }

    assertThat(byAddress(direct)).as("the closed connection's memory, read by address").isEqualTo(original);
    assertThat(byAddress(whole.isDirect() ? whole : ByteBuffer.allocateDirect(SIZE).put(whole.duplicate()).flip()))
        .as("asByteBuffer(), read by address").isEqualTo(original);
    assertThat(m.toByteArray()).as("a heap copy").isEqualTo(original);
    assertThat(ByteBuffer.allocateDirect(SIZE).put(m.asByteBuffer()).flip()).as("a direct copy")
        .isEqualTo(ByteBuffer.wrap(original));
    assertThat(m.segment().toArray(ValueLayout.JAVA_BYTE)).as("the segment").isEqualTo(original);
    m.release();
    assertThatThrownBy(m::segment).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(m::toByteArray).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(m::asByteBuffer).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void aSegmentKeptPastItsMessagesReleaseFailsInsteadOfReadingThePeersNextMessage() throws Exception {
    BlockingQueue<RdmaMessage> kept = new LinkedBlockingQueue<>();
    DisposableRdmaServer server = keeping(kept, new LinkedBlockingQueue<>());
    RdmaConnection c = connect(server);
    c.outbound().send(Mono.just(bytes(1))).block(WAIT);
    RdmaMessage m = take(kept);
    MemorySegment segment = m.segment();
    ByteBuffer buffer = segment.asByteBuffer();
    m.release();
    // The peer's next messages land in the receive buffers, the released one among them.
    var sent = c.outbound().send(Flux.range(0, 200).map(j -> bytes(100 + j))).toFuture();
    for (int i = 0; i < 200; i++) {
      RdmaMessage next = kept.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
      if (next == null) { // seen once in CI on rxe0, with no loop thread left: say what the connection was doing
        printThreads();
      }
      assertThat(next).as("message %d of 200 within %s; the send: %s; the client: %s, disposed %s, %s", i, WAIT,
          sent.isDone() ? (sent.isCompletedExceptionally() ? sent.exceptionNow() : "complete") : "in progress", c,
          c.isDisposed(), c.statistics()).isNotNull();
      next.release();
    }
    sent.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    assertThatThrownBy(() -> segment.get(ValueLayout.JAVA_BYTE, 0)).as("a read of the released message's segment")
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> buffer.get(0)).as("a read of a buffer taken from it")
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(m::toByteArray).isInstanceOf(IllegalStateException.class);
  }
}
