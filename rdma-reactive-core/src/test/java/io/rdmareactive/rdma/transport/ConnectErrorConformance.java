package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.conformance.LeakCheck;
import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.MessageTooLargeException;
import io.rdmareactive.rdma.device.RdmaDevices;
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

/** Connects and binds that fail, each with the reason a user can act on. */
public abstract class ConnectErrorConformance extends TransportSuite {


  @Test
  void unresolvableHostFailsWithUnresolved() {
    StepVerifier.create(RdmaClient.create().host("no-such-host.invalid").port(7471)
            .option(RdmaOption.PROVIDER, fixture().provider()).connect())
        .expectErrorSatisfies(e -> assertReason(e, ConnectionException.Reason.UNRESOLVED))
        .verify(WAIT);
    StepVerifier.create(RdmaServer.create().host("no-such-host.invalid").option(RdmaOption.PROVIDER, fixture().provider())
            .bind())
        .expectErrorSatisfies(e -> assertReason(e, ConnectionException.Reason.UNRESOLVED))
        .verify(WAIT);
  }

  @Test
  void portInUseFailsWithAddressInUse() {
    DisposableRdmaServer first = bind(server());
    StepVerifier.create(server().port(first.port()).bind())
        .expectErrorSatisfies(e -> assertReason(e, ConnectionException.Reason.ADDRESS_IN_USE))
        .verify(WAIT);
  }

  @Test
  void nobodyListeningFailsWithRefused() {
    DisposableRdmaServer gone = server().bindNow();
    int port = gone.port();
    gone.disposeNow(WAIT);
    StepVerifier.create(client(port).connect())
        .expectErrorSatisfies(e -> assertReason(e, ConnectionException.Reason.REFUSED))
        .verify(WAIT);
  }

  @Test
  void aListenerThatNeverAcceptsMakesConnectTimeOut() {
    ConnectionProvider cp = fixture().connections();
    InetSocketAddress address = new InetSocketAddress(fixture().host(), 0);
    try (Listener listener = cp.listen(address, new EndpointOptions(4, 4, 0, new byte[0]))) {
      long start = System.nanoTime();
      StepVerifier.create(client(listener.boundAddress().getPort()).connectTimeout(Duration.ofMillis(300)).connect())
          .expectErrorSatisfies(e -> assertReason(e, ConnectionException.Reason.TIMED_OUT))
          .verify(WAIT);
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
    }
  }

  /**
   * Connects that time out at every stage (resolving the address and the route, making the
   * endpoint, establishing) free whatever they made: timeouts doubling from 1 ms to 2 s meet each
   * stage, and the leak check counts what is left. An endpoint made just as the deadline passed
   * was once dropped unclosed, holding its loop and the loop's SRQ, PD and pools. A guard, not a
   * reproduction: whether a deadline meets that moment depends on timing.
   */
  @Test
  void connectsTimingOutAtEveryStageFreeWhatTheyMade() {
    ConnectionProvider cp = fixture().connections();
    InetSocketAddress address = new InetSocketAddress(fixture().host(), 0);
    try (Listener listener = cp.listen(address, new EndpointOptions(4, 4, 0, new byte[0]))) {
      for (long ms = 1; ms <= 2048; ms *= 2) {
        StepVerifier.create(client(listener.boundAddress().getPort()).connectTimeout(Duration.ofMillis(ms)).connect())
            .expectErrorSatisfies(e -> assertReason(e, ConnectionException.Reason.TIMED_OUT))
            .verify(WAIT);
      }
    }
  }

  @Test
  void aFramedClientRefusesARawServer() {
    DisposableRdmaServer server = bind(server().option(RdmaOption.RAW, true));
    StepVerifier.create(client(server).connect())
        .expectErrorSatisfies(e -> assertReason(e, ConnectionException.Reason.REFUSED))
        .verify(WAIT);
  }
}
