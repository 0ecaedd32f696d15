package io.rdmareactive.rsocket;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.conformance.CrossHost;
import io.rdmareactive.rdma.conformance.NumberedMessages;
import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaServer;
import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.core.RSocketConnector;
import io.rsocket.core.RSocketServer;
import io.rsocket.util.DefaultPayload;
import java.time.Duration;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * RSocket request-stream between two hosts over the native transport (scripts/softroce-vm-pair:
 * guest a serves on 10.0.0.1, guest b connects), each way at once: b requests 10^4 numbered
 * payloads of a's responder while a requests 10^4 of b's through the setup's sending socket. Each
 * arrives exactly once, in order, byte for byte, under 1% loss and under 5 ms delay with jitter
 * (each guest's egress). Both guests run this class at once.
 */
@Tag("cross-host")
@TestMethodOrder(MethodOrderer.MethodName.class)
class CrossHostRSocketTest {
  @RegisterExtension
  final CrossHost pair = new CrossHost();

  private static final int PORT = 7630;
  private static final int PAYLOADS = 10_000;
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final Duration DONE = Duration.ofMinutes(6);

  /** Streams the numbered payloads to whoever requests a stream. */
  private static final RSocket NUMBERS = new RSocket() {
    @Override
    public Flux<Payload> requestStream(Payload request) {
      request.release();
      return Flux.range(0, PAYLOADS).map(n -> DefaultPayload.create(NumberedMessages.message(n)));
    }
  };

  @Test
  void a_onePercentLoss() throws Exception {
    pair.netem("loss", "1%");
    Duration took = requestStreamsBothWays(PORT);
    pair.figure("RSocket request-stream at 1% loss: " + PAYLOADS + " each way in " + took.toMillis() + " ms");
  }

  @Test
  void b_delayWithJitter() throws Exception {
    pair.delayInOrder("5ms", "1ms");
    Duration took = requestStreamsBothWays(PORT + 1);
    pair.figure("RSocket request-stream at 5 ms +- 1 ms delay: " + PAYLOADS + " each way in " + took.toMillis() + " ms");
  }

  /** This guest's request-stream to the other, checked; the time it took. */
  private Duration requestStreamsBothWays(int port) {
    Sinks.One<RSocket> peer = Sinks.one();
    io.rsocket.Closeable server = null;
    RSocket client = null;
    if (pair.isA()) {
      server = RSocketServer.create((setup, sendingSocket) -> {
        peer.tryEmitValue(sendingSocket);
        return Mono.just(NUMBERS);
      }).bind(RdmaServerTransport.create(RdmaServer.create().host(pair.self()).port(port)
          .option(RdmaOption.PROVIDER, "native"))).block(WAIT);
      pair.barrier("listening");
    } else {
      pair.barrier("listening");
      client = RSocketConnector.create().acceptor(io.rsocket.SocketAcceptor.with(NUMBERS))
          .connect(RdmaClientTransport.create(RdmaClient.create().host(pair.peer()).port(port)
              .option(RdmaOption.PROVIDER, "native").connectTimeout(WAIT))).block(WAIT);
      peer.tryEmitValue(client);
    }
    try {
      RSocket other = peer.asMono().block(WAIT);
      NumberedMessages check = new NumberedMessages();
      long start = System.nanoTime();
      // REQUEST_N in batches: asking for all 10^4 at once makes the responder emit them faster than
      // the wire takes them, and its transport closes the connection past maxPendingFrames (8192).
      Long count = other.requestStream(DefaultPayload.create("numbers")).limitRate(256).doOnNext(p -> {
        try {
          byte[] bytes = new byte[p.data().readableBytes()];
          p.data().readBytes(bytes);
          check.verify(bytes);
        } finally {
          p.release();
        }
      }).count().block(DONE);
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      assertThat(count).isEqualTo(PAYLOADS);
      assertThat(check.count()).isEqualTo(PAYLOADS);
      pair.heal();
      pair.barrier("done");
      return took;
    } finally {
      if (client != null) {
        client.dispose();
        client.onClose().block(WAIT);
      }
      if (server != null) {
        server.dispose();
        server.onClose().block(WAIT);
      }
    }
  }
}
