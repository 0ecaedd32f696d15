package io.rdmareactive.rdma.rdmacore;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.transport.DisposableRdmaServer;
import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import reactor.core.publisher.Mono;

/**
 * A C librdmacm peer on one host and this library ({@link RdmaOption#RAW}) on the other, both ways
 * (scripts/softroce-vm-pair): rdma_server on guest a answers a Java client on guest b, and a Java
 * server on guest a answers rdma_client on guest b. The programs exchange one 16-byte message each
 * way (see {@link NativeRawInteropTest}), here across two kernels and their CMs.
 */
@Tag("cross-host")
@TestMethodOrder(MethodOrderer.MethodName.class)
class CrossHostInteropTest extends AbstractCrossHostTest {
  private static final int PORT = 7471; // the programs' default
  private static final Duration WAIT = CrossHostEnds.WAIT;

  @Test
  void a_theCRdmaServerAnswersAJavaClientOnTheOtherHost() throws Exception {
    if (pair.isA()) {
      Process c = new ProcessBuilder("rdma_server", "-s", pair.self(), "-p", Integer.toString(PORT))
          .redirectErrorStream(true).start();
      try {
        pair.barrier("started");
        pair.barrier("done"); // guest b's client got its answer: rdma_server is on its way out
        NativeRawInteropTest.assertExitsZero(c, "rdma_server");
      } finally {
        c.destroyForcibly();
      }
      return;
    }
    pair.barrier("started");
    RdmaConnection conn = connectWhenListening();
    try {
      byte[] message = "java says hello!".getBytes(StandardCharsets.US_ASCII);
      List<byte[]> replies = Mono.zip(conn.outbound().send(Mono.just(message)).thenReturn(true),
          conn.inbound().receiveBytes().collectList()).map(t -> t.getT2()).block(WAIT);
      assertThat(replies).as("what rdma_server answered").hasSize(1);
      assertThat(replies.getFirst()).hasSize(message.length);
      assertThat(conn.statistics().completionErrors()).isZero();
    } finally {
      conn.dispose();
      conn.onDispose().block(WAIT);
    }
    pair.barrier("done");
  }

  @Test
  void b_aJavaServerAnswersTheCRdmaClientOnTheOtherHost() throws Exception {
    if (pair.isA()) {
      List<byte[]> received = new CopyOnWriteArrayList<>();
      DisposableRdmaServer server = raw(RdmaServer.create().host(pair.self()).port(PORT))
          .handle((in, out) -> out.send(in.receive().doOnNext(m -> received.add(m.toByteArray()))))
          .bindNow(WAIT);
      try {
        pair.barrier("listening");
        pair.barrier("done");
        assertThat(received).as("what rdma_client sent").hasSize(1);
        assertThat(received.getFirst()).hasSize(16);
      } finally {
        server.disposeNow(WAIT);
      }
      return;
    }
    pair.barrier("listening");
    Process c = new ProcessBuilder("rdma_client", "-s", pair.peer(), "-p", Integer.toString(PORT))
        .redirectErrorStream(true).start();
    NativeRawInteropTest.assertExitsZero(c, "rdma_client");
    pair.barrier("done");
  }

  private static RdmaServer raw(RdmaServer s) {
    return s.option(RdmaOption.PROVIDER, NativeProvider.NAME).option(RdmaOption.RAW, true)
        .option(RdmaOption.BUFFER_SIZE, 64).option(RdmaOption.BUFFER_COUNT, 4);
  }

  /** rdma_server takes a moment (longer under TCG) before it listens: REFUSED until then. */
  private RdmaConnection connectWhenListening() throws InterruptedException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (true) {
      try {
        return RdmaClient.create().host(pair.peer()).port(PORT).option(RdmaOption.PROVIDER, NativeProvider.NAME)
            .option(RdmaOption.RAW, true).option(RdmaOption.BUFFER_SIZE, 64).option(RdmaOption.BUFFER_COUNT, 4)
            .connectTimeout(Duration.ofSeconds(10)).connectNow();
      } catch (ConnectionException e) {
        assertThat(e.reason()).as("%s", e).isEqualTo(ConnectionException.Reason.REFUSED);
        assertThat(System.nanoTime() - deadline).as("rdma_server listening in time").isNegative();
        Thread.sleep(200);
      }
    }
  }
}
