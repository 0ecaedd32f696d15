package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.RdmaDevices;
import io.rdmareactive.rdma.conformance.LeakCheck;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

/**
 * Closing, provider-neutral: what a local dispose does when the peer disconnects while it waits.
 * The in-memory provider runs it on the host, the native module subclasses it (tagged
 * {@code native}) to run it on rxe0.
 */
public abstract class AbstractCloseConformanceTest {
  protected static final Duration WAIT = Duration.ofSeconds(60);

  /** The {@link RdmaOption#PROVIDER} value under test. */
  protected abstract String provider();

  /** The address servers bind and clients connect to. */
  protected abstract String host();

  /** Live verbs objects by type; the same after each test as before it. */
  protected abstract Map<String, Integer> liveResources();

  @RegisterExtension
  final LeakCheck leakCheck = LeakCheck.settling(this::liveResources, WAIT);

  /**
   * A server sends to a peer that promises buffers and never posts a receive (RNR retries
   * forever, so on a device its sends stay unacknowledged); the server is disposed, and its
   * connection waits for those sends within a long close timeout; then the peer disconnects. The
   * pending sends fail with {@code RESET}, as for any disconnect by the peer, not with the close
   * timeout's {@code TIMED_OUT} (whose branch is also the one that logs the timeout warning), and
   * the dispose ends without waiting for the timeout. In memory a SEND that meets no receive fails
   * at once (no RNR retry): there the sends fail with {@code RESET} before the dispose.
   */
  @Test
  void aPeersDisconnectDuringADisposeFailsPendingSendsWithResetNotTimedOut() {
    Duration closeTimeout = Duration.ofMinutes(5); // longer than WAIT: the dispose must not wait for it
    Sinks.One<Throwable> sendFailed = Sinks.one();
    Sinks.Empty<Void> sending = Sinks.empty();
    DisposableRdmaServer server = RdmaServer.create().host(host()).port(0).option(RdmaOption.PROVIDER, provider())
        .option(RdmaOption.CLOSE_TIMEOUT, closeTimeout)
        .option(RdmaOption.RNR_RETRY, 7)
        .handle((in, out) -> out.sendString(Flux.range(0, 4).map(i -> "to a peer that never reads " + i)
                .doOnSubscribe(s -> sending.tryEmitEmpty()))
            .then().doOnError(sendFailed::tryEmitValue).onErrorResume(e -> Mono.empty()))
        .bindNow();
    try {
      RoguePeer rogue = RoguePeer.connect(RdmaDevices.provider(provider()).connections(),
          new InetSocketAddress(host(), server.port()), 8, 0, WAIT);
      try {
        StepVerifier.create(sending.asMono()).expectComplete().verify(WAIT);
        server.dispose(); // the connection's dispose now waits for its unacknowledged sends
      } finally {
        rogue.close(); // the peer disconnects during that wait
      }
      StepVerifier.create(sendFailed.asMono())
          .assertNext(e -> {
            assertThat(e).isInstanceOf(ConnectionException.class);
            assertThat(((ConnectionException) e).reason()).as("reason of %s", e)
                .isEqualTo(ConnectionException.Reason.RESET);
            assertThat(e.getMessage()).doesNotContain("close timeout");
          })
          .expectComplete()
          .verify(WAIT);
      StepVerifier.create(server.onDispose()).as("the dispose ends without waiting for the close timeout")
          .expectComplete().verify(WAIT);
    } finally {
      server.disposeNow(WAIT);
    }
  }
}
