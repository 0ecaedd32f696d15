package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.conformance.LeakCheck;
import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.MessageTooLargeException;
import io.rdmareactive.rdma.RdmaDevices;
import io.rdmareactive.rdma.ResourceClosedException;
import io.rdmareactive.rdma.spi.ConnectionProvider;
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

/** Options and their checks, what a send refuses, and raw mode (one SEND per message, no framing). */
public abstract class OptionsAndRawModeConformance extends TransportSuite {

  @Test
  void aMessageAboveTheMaximumFailsThatSendOnly() {
    DisposableRdmaServer server = bind(server().handle((in, out) -> out.send(in.receive())));
    RdmaConnection c = connect(client(server).option(RdmaOption.MAX_MESSAGE_SIZE, 100_000));
    StepVerifier.create(c.outbound().send(Mono.just(new byte[100_001])))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(MessageTooLargeException.class)
            .hasMessageContaining("100001").hasMessageContaining("100000"))
        .verify(WAIT);
    assertThat(c.statistics().bytesSent()).as("nothing of it was posted").isZero();
    byte[] fits = random(100_000, 7);
    StepVerifier.create(Mono.zip(c.outbound().send(Mono.just(fits)).thenReturn(true),
            c.inbound().receiveBytes().next()).map(t -> t.getT2()))
        .assertNext(b -> assertThat(b).isEqualTo(fits))
        .expectComplete()
        .verify(WAIT);
  }

  @Test
  void anItemOfAnUnsupportedTypeFailsThatSend() {
    DisposableRdmaServer server = bind(server());
    RdmaConnection c = connect(client(server));
    StepVerifier.create(c.outbound().send(Mono.just(42)))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("java.lang.Integer"))
        .verify(WAIT);
  }

  @Test
  void invalidOptionsAreRejectedNamingTheOption() {
    assertThatThrownBy(() -> RdmaClient.create().option(RdmaOption.BUFFER_SIZE, 10))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("BUFFER_SIZE");
    assertThatThrownBy(() -> RdmaServer.create().option(RdmaOption.BUFFER_COUNT, 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("BUFFER_COUNT");
    assertThatThrownBy(() -> RdmaServer.create().port(70_000))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("port");
    assertThatThrownBy(() -> RdmaClient.create().option(RdmaOption.PROVIDER, "bogus"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PROVIDER");
    assertThatThrownBy(() -> RdmaServer.create().option(RdmaOption.MAX_MESSAGE_SIZE, Integer.MAX_VALUE))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("MAX_MESSAGE_SIZE must be 1 .. 268435456");
    assertThatThrownBy(() -> RdmaServer.create().option(RdmaOption.MAX_CONNECTIONS, 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("MAX_CONNECTIONS");
    assertThatThrownBy(() -> RdmaServer.create().option(RdmaOption.HANDSHAKE_TIMEOUT, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("HANDSHAKE_TIMEOUT");
    assertThatThrownBy(() -> RdmaServer.create().option(RdmaOption.CLOSE_TIMEOUT, Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("CLOSE_TIMEOUT");
    assertThatThrownBy(() -> RdmaClient.create().option(RdmaOption.RNR_RETRY, 8))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("RNR_RETRY must be 0 .. 7");
    assertThatThrownBy(() -> RdmaClient.create().option(RdmaOption.RETRY_COUNT, -1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("RETRY_COUNT");
    assertThatThrownBy(() -> new EndpointOptions(1, 1, 0, new byte[0]).withRetries(7, 8))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("0 .. 7");
  }


  @Test
  void rawModeEchoesOneSendPerMessage() {
    DisposableRdmaServer server = bind(server().option(RdmaOption.RAW, true).option(RdmaOption.BUFFER_SIZE, 4096)
        .handle((in, out) -> out.send(in.receive())));
    RdmaConnection c = connect(client(server).option(RdmaOption.RAW, true).option(RdmaOption.BUFFER_SIZE, 4096));
    List<String> words = List.of("rdma", "", "x".repeat(4096));
    StepVerifier.create(Mono.zip(c.outbound().sendString(Flux.fromIterable(words)).thenReturn(true),
            c.inbound().receiveString().take(words.size()).collectList()).map(t -> t.getT2()))
        .expectNext(words)
        .expectComplete()
        .verify(WAIT);
    StepVerifier.create(c.outbound().send(Mono.just(new byte[4097])))
        .expectError(MessageTooLargeException.class).verify(WAIT);
    assertThat(c.statistics().creditUpdatesSent()).isZero();
  }
}
