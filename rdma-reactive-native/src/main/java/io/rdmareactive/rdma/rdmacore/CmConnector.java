package io.rdmareactive.rdma.rdmacore;

import static java.lang.foreign.ValueLayout.ADDRESS;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.ResourceClosedException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The outgoing connection attempts of a {@link CmEventLoop}: the setup state machine (resolve
 * address, resolve route, create QP, connect, ESTABLISHED) and its deadlines. It is apart from the
 * loop so the loop only polls and dispatches: an attempt's events come here until it settles, and
 * every failure is mapped to a {@link ConnectionException} and the id destroyed. Everything but
 * {@link #start} and {@link #forget} runs on the loop's thread; {@link #forget} comes from an
 * endpoint's close on any thread, hence the concurrent map.
 */
final class CmConnector {
  private static final Logger log = Loggers.getLogger(CmConnector.class);
  private static final int RESOLVE_TIMEOUT_MILLIS = 2_000;

  private final CmEventLoop loop;
  private final Map<Long, PendingConnect> connecting = new ConcurrentHashMap<>();

  CmConnector(CmEventLoop loop) {
    this.loop = loop;
  }

  /**
   * Starts an attempt to {@code host}:{@code port} on the loop: to ESTABLISHED with {@code qp}, or
   * to ROUTE_RESOLVED when {@code qp} is null (see {@link CmEventLoop#connect} and
   * {@link CmEventLoop#resolve}).
   */
  CompletableFuture<CmEndpoint> start(String host, int port, @Nullable CmQueuePairOptions qp, byte[] privateData,
      Duration timeout, CmEventLoop.Handler handler) {
    CompletableFuture<CmEndpoint> future = new CompletableFuture<>();
    CmAddressInfo address;
    try {
      address = CmAddressInfo.active(host, port);
    } catch (RuntimeException e) {
      future.completeExceptionally(e);
      return future;
    }
    long deadline = System.nanoTime() + timeout.toNanos();
    loop.execute(() -> begin(address, qp, privateData.clone(), deadline, handler, future));
    return future;
  }

  /** On the loop: the attempt {@code event} belongs to takes it; false when it belongs to none. */
  boolean dispatch(long idAddress, CmEvent event) {
    PendingConnect pending = connecting.get(idAddress);
    if (pending == null) {
      return false;
    }
    advance(pending, event);
    return true;
  }

  /** Called by an endpoint's close (under its lock): its attempt, if any, fails. */
  void forget(CmEndpoint endpoint) {
    PendingConnect p = connecting.remove(endpoint.idAddress());
    if (p != null) {
      p.future.completeExceptionally(new ResourceClosedException(endpoint + " (closed while connecting)"));
    }
  }

  /** On the loop, once it stops: the attempts still in progress are abandoned. */
  void abandonAll() {
    for (Long idAddress : connecting.keySet()) {
      fail(idAddress, new ConnectionException(ConnectionException.Reason.RESET, "event loop closed", null));
    }
  }

  private void begin(CmAddressInfo address, @Nullable CmQueuePairOptions qp, byte[] privateData, long deadline,
      CmEventLoop.Handler handler, CompletableFuture<CmEndpoint> future) {
    CmEndpoint ep = null;
    try (address) {
      if (future.isDone()) {
        return;
      }
      if (System.nanoTime() - deadline >= 0) { // expired while queued: strict, whatever the poll cadence
        future.completeExceptionally(new ConnectionException(ConnectionException.Reason.TIMED_OUT,
            "connecting to " + address + " timed out before it started", null));
        return;
      }
      loop.ensureOpen();
      MemorySegment out = Arena.ofAuto().allocate(ADDRESS);
      int rc = (int) Librdmacm.CREATE_ID.invokeExact(Native.callState(), loop.channel(), out, MemorySegment.NULL,
          (int) CmLayout.RDMA_PS_TCP);
      if (rc != 0) {
        throw RdmaCm.failure("rdma_create_id");
      }
      ep = new CmEndpoint(out.get(ADDRESS, 0), "active endpoint to " + address);
      // Pending before registered: a loop closing in between fails it through fail(), which
      // destroys the id and completes the future, as for any later failure.
      connecting.put(ep.idAddress(), new PendingConnect(ep, qp, privateData, deadline, handler, future));
      loop.register(ep, null);
      ep.resolveAddress(address, RESOLVE_TIMEOUT_MILLIS);
    } catch (Throwable t) {
      if (ep != null) {
        fail(ep.idAddress(), t);
      } else {
        future.completeExceptionally(t);
      }
    }
  }

  private void advance(PendingConnect p, CmEvent event) {
    CmEndpoint ep = p.endpoint;
    try {
      if (p.future.isDone()) { // cancelled by the caller
        fail(ep.idAddress(), new java.util.concurrent.CancellationException());
        return;
      }
      if (event.type() != CmEvent.Type.ESTABLISHED && System.nanoTime() - p.deadline >= 0) {
        fail(ep.idAddress(), new ConnectionException(ConnectionException.Reason.TIMED_OUT,
            "connecting " + ep + " timed out", null));
        return;
      }
      switch (event.type()) {
        case ADDRESS_RESOLVED -> ep.resolveRoute(RESOLVE_TIMEOUT_MILLIS);
        case ROUTE_RESOLVED -> {
          CmQueuePairOptions qp = p.qp;
          if (qp == null) { // resolve(): the caller creates the QP and connects
            connecting.remove(ep.idAddress());
            ep.handler(p.handler);
            if (!p.future.complete(ep)) {
              ep.close(); // cancelled at the last moment
            }
          } else {
            ep.createQueuePair(null, qp);
            ep.connect(p.privateData);
          }
        }
        case ESTABLISHED -> {
          connecting.remove(ep.idAddress());
          ep.peerPrivateData(event.privateData());
          ep.handler(p.handler);
          try {
            p.handler.onEvent(ep, event);
          } catch (Throwable t) {
            log.error("rdma-cm: handler failed on " + event, t);
          }
          if (!p.future.complete(ep)) {
            ep.close(); // cancelled at the last moment
          }
        }
        case REJECTED -> fail(ep.idAddress(), new ConnectionException(ConnectionException.Reason.REFUSED,
            "connection to " + ep + " refused (reject reason " + event.status() + ")", null));
        case ADDRESS_ERROR, ROUTE_ERROR, UNREACHABLE, CONNECT_ERROR, DEVICE_REMOVAL ->
            fail(ep.idAddress(), new ConnectionException(ConnectionException.Reason.UNREACHABLE,
                "connecting " + ep + ": " + RdmaCm.eventName(event.type().ordinal())
                    + statusText(event.status()), null));
        case DISCONNECTED -> fail(ep.idAddress(), new ConnectionException(ConnectionException.Reason.RESET,
            "connection to " + ep + " reset while connecting", null));
        default -> log.debug("rdma-cm: {} while connecting, ignored", event);
      }
    } catch (Throwable t) {
      fail(ep.idAddress(), t);
    }
  }

  private static String statusText(int status) {
    return status == 0 ? "" : " (" + (status < 0 ? Native.strerror(-status) : "status " + status) + ")";
  }

  /** On the loop: whether an attempt is under way, whose deadline or cancellation the loop must check. */
  boolean pending() {
    return !connecting.isEmpty();
  }

  /** On the loop, every turn: attempts cancelled or past their deadline without an event fail here. */
  void checkDeadlines() {
    if (connecting.isEmpty()) {
      return;
    }
    long now = System.nanoTime();
    for (PendingConnect p : connecting.values()) {
      if (p.future.isDone()) {
        fail(p.endpoint.idAddress(), new java.util.concurrent.CancellationException());
      } else if (now - p.deadline >= 0) {
        fail(p.endpoint.idAddress(), new ConnectionException(ConnectionException.Reason.TIMED_OUT,
            "connecting " + p.endpoint + " timed out", null));
      }
    }
  }

  private void fail(long idAddress, Throwable cause) {
    PendingConnect p = connecting.remove(idAddress);
    if (p == null) {
      return;
    }
    try {
      p.endpoint.close();
    } catch (RuntimeException e) {
      cause.addSuppressed(e);
    }
    p.future.completeExceptionally(cause);
  }

  private record PendingConnect(CmEndpoint endpoint, @Nullable CmQueuePairOptions qp, byte[] privateData,
      long deadline, CmEventLoop.Handler handler, CompletableFuture<CmEndpoint> future) {}
}
