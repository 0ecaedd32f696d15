package io.rdmareactive.rdma.rdmacore;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.spi.ConnectionProvider;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.spi.Endpoint;
import io.rdmareactive.rdma.spi.EndpointOptions;
import io.rdmareactive.rdma.spi.ListenLimits;
import io.rdmareactive.rdma.spi.Listener;
import io.rdmareactive.rdma.spi.SinkHandoff;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * librdmacm connection establishment for the transport. Every id lives on one process-wide
 * {@link CmEventLoop} ({@code rdma-cm-N}), started by the first listener or connect and closed
 * (on its own thread, so closing never blocks a caller) once the last listener, endpoint and
 * connection attempt is gone.
 *
 * <p>{@link #connect}: rdma_create_id, rdma_resolve_addr, rdma_resolve_route on the loop within
 * the timeout (TIMED_OUT after it, UNREACHABLE on an address or route error), then the endpoint's
 * verbs objects and rdma_create_qp; {@link Endpoint#establish} runs rdma_connect. A port nobody
 * listens on is REJECTED by the peer's CM (invalid service id), so establish fails with REFUSED.
 */
final class NativeConnectionProvider implements ConnectionProvider {
  static final NativeConnectionProvider INSTANCE = new NativeConnectionProvider();
  private static final Logger log = Loggers.getLogger(NativeConnectionProvider.class);
  private static final int IDLE_CLOSE_ATTEMPTS = 500;
  private static final long IDLE_CLOSE_RETRY_MILLIS = 20;

  private @Nullable CmEventLoop loop; // guarded by this
  private int users; // guarded by this

  private final java.util.concurrent.atomic.LongAdder passiveEndpoints = new java.util.concurrent.atomic.LongAdder();

  private NativeConnectionProvider() {}

  @Override
  public Listener listen(InetSocketAddress address, EndpointOptions options, ListenLimits limits) {
    checkResolved(address);
    return NativeConnectionListener.open(this, address, options, limits);
  }

  /** A listener built an endpoint for a connect request (counted for {@link #passiveEndpointsBuilt()}). */
  void passiveEndpointBuilt() {
    passiveEndpoints.increment();
  }

  /**
   * Endpoints built for connect requests so far, by every listener of this process: what a refused
   * request must not add to (a statistic, as the in-memory provider's creation counts).
   */
  long passiveEndpointsBuilt() {
    return passiveEndpoints.sum();
  }

  @Override
  public Mono<Endpoint> connect(InetSocketAddress address, EndpointOptions options, Duration timeout) {
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("connect timeout must be positive, was " + timeout);
    }
    return Mono.create(sink -> {
      try {
        checkResolved(address);
      } catch (ConnectionException e) {
        sink.error(e);
        return;
      }
      CmEventLoop l;
      try {
        l = acquireLoop();
      } catch (RuntimeException e) {
        sink.error(e);
        return;
      }
      CompletableFuture<CmEndpoint> resolved = l.resolve(address.getAddress().getHostAddress(), address.getPort(),
          timeout, (cm, event) -> log.debug("rdma-cm: {} before the endpoint existed, ignored", event));
      // A cancel while resolving stops it (the loop destroys the id at its next turn); an endpoint
      // made after a cancel, or handed over just before one, is closed.
      SinkHandoff<Endpoint> handoff = SinkHandoff.on(sink, Endpoint::close, () -> resolved.cancel(false));
      resolved.whenComplete((cm, error) -> {
        if (error != null) {
          releaseLoop(l);
          if (!(error instanceof CancellationException)) {
            sink.error(error);
          }
          return;
        }
        NativeConnectionEndpoint ep;
        try {
          ep = NativeConnectionEndpoint.create(this, l, cm, true, address, options, new byte[0]);
        } catch (Throwable t) {
          AbstractRdmaResource.closeQuietly(cm);
          releaseLoop(l);
          sink.error(t);
          return;
        }
        handoff.deliver(ep);
      });
    });
  }

  /** One more user of the event loop (starting it when there is none): release with {@link #releaseLoop}. */
  synchronized CmEventLoop acquireLoop() {
    CmEventLoop l = loop;
    if (l == null || l.isClosed()) {
      l = new CmEventLoop();
      loop = l;
    }
    users++;
    return l;
  }

  /** One more user of {@code l}, which a current user already holds (a listener taking a request). */
  synchronized void retainLoop(CmEventLoop l) {
    if (l != loop || users == 0) {
      throw new IllegalStateException("the rdma-cm event loop " + l + " is not in use");
    }
    users++;
  }

  /** Drops a user of {@code l}; the last one closes it once no id is attached any more. */
  synchronized void releaseLoop(CmEventLoop l) {
    if (l != loop || users == 0) {
      return;
    }
    if (--users == 0) {
      l.execute(() -> closeIfIdle(l, 0));
    }
  }

  /** On the loop's thread: closing there never joins a thread, so no caller blocks on it. */
  private void closeIfIdle(CmEventLoop l, int attempt) {
    synchronized (this) {
      if (l != loop || users > 0) {
        return;
      }
      // A cancelled connect's id goes at the loop's next turn: wait for it.
      if (l.dependants() == 0) {
        loop = null;
        try {
          l.close();
        } catch (RuntimeException e) {
          log.warn("rdma-reactive: could not close the rdma-cm event loop", e);
        }
        return;
      }
      if (attempt >= IDLE_CLOSE_ATTEMPTS) {
        log.warn("rdma-reactive: " + l + " keeps " + l.dependants() + " id(s) attached; left running");
        return;
      }
    }
    Schedulers.parallel().schedule(() -> {
      synchronized (this) {
        if (l == loop && users == 0) {
          l.execute(() -> closeIfIdle(l, attempt + 1));
        }
      }
    }, IDLE_CLOSE_RETRY_MILLIS, TimeUnit.MILLISECONDS);
  }

  @Override
  public CompletionChannel openCompletionChannel(String deviceName) {
    return NativeCompletionChannel.createShared(RdmaCm.deviceContext(deviceName));
  }

  @Override
  public ProtectionDomain allocateProtectionDomain(String deviceName) {
    return NativeProtectionDomain.onDeviceContext(RdmaCm.deviceContext(deviceName));
  }

  static void checkResolved(InetSocketAddress address) {
    if (address.isUnresolved()) {
      throw new ConnectionException(ConnectionException.Reason.UNRESOLVED,
          "rdma_getaddrinfo failed: cannot resolve " + address.getHostString(), null);
    }
  }
}
