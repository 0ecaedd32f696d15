package io.rdmareactive.rdma.nativ;

import static java.lang.foreign.ValueLayout.ADDRESS;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.spi.Endpoint;
import io.rdmareactive.rdma.spi.EndpointOptions;
import io.rdmareactive.rdma.spi.Listener;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * A listening RDMA CM id on the provider's event loop (rdma_create_id, rdma_bind_addr,
 * rdma_listen). Each RDMA_CM_EVENT_CONNECT_REQUEST brings a new id, kept pending until
 * {@link #incoming()} has demand; it then becomes a {@link NativeConnectionEndpoint} (verbs
 * objects and QP created then). A pending request whose initiator gives up (REJECTED) is
 * destroyed; closing rejects the rest.
 */
final class NativeConnectionListener extends AbstractRdmaResource implements Listener {
  private static final Logger log = Loggers.getLogger(NativeConnectionListener.class);
  private static final int BACKLOG = 64;

  private final NativeConnectionProvider provider;
  private final CmEventLoop loop;
  private final CmEndpoint id;
  private final InetSocketAddress bound;
  private final EndpointOptions options;
  private final AtomicBoolean subscribed = new AtomicBoolean();
  // guarded by this
  private final ArrayDeque<Request> pending = new ArrayDeque<>();
  private @Nullable FluxSink<Endpoint> sink;
  private boolean draining;
  private boolean drainAgain;
  private boolean loopReleased;
  /** Why the listener can take no more requests (its device went away), guarded by this. */
  private @Nullable ConnectionException failure;

  private NativeConnectionListener(NativeConnectionProvider provider, CmEventLoop loop, CmEndpoint id,
      InetSocketAddress bound, EndpointOptions options) {
    super("native listener on " + bound, null);
    this.provider = provider;
    this.loop = loop;
    this.id = id;
    this.bound = bound;
    this.options = options;
  }

  /**
   * Binds and listens at {@code address}.
   *
   * @throws ConnectionException ADDRESS_IN_USE (port taken), UNRESOLVED (no RDMA device has the address)
   */
  static NativeConnectionListener open(NativeConnectionProvider provider, InetSocketAddress address,
      EndpointOptions options) {
    CmEventLoop loop = provider.acquireLoop();
    CmEndpoint id = null;
    NativeConnectionListener listener = null;
    try (Arena a = Arena.ofConfined()) {
      MemorySegment out = a.allocate(ADDRESS);
      int rc = (int) Librdmacm.CREATE_ID.invokeExact(Native.callState(), loop.channel(), out, MemorySegment.NULL,
          (int) CmLayout.RDMA_PS_TCP);
      if (rc != 0) {
        throw RdmaCm.failure("rdma_create_id");
      }
      id = new CmEndpoint(out.get(ADDRESS, 0), "listening id on " + address);
      try (CmAddressInfo info = CmAddressInfo.passive(address.getAddress().getHostAddress(), address.getPort())) {
        rc = (int) Librdmacm.BIND_ADDR.invokeExact(Native.callState(), id.id(), info.sourceAddress());
        if (rc != 0) {
          throw listenFailure("rdma_bind_addr", Native.lastErrno(), address);
        }
      }
      int port = Short.toUnsignedInt(Short.reverseBytes((short) Librdmacm.GET_SRC_PORT.invokeExact(id.id())));
      listener = new NativeConnectionListener(provider, loop, id, new InetSocketAddress(address.getAddress(), port),
          options);
      loop.register(id, listener::onListenEvent); // before rdma_listen: its first request must find us
      rc = (int) Librdmacm.LISTEN.invokeExact(Native.callState(), id.id(), BACKLOG);
      if (rc != 0) {
        throw listenFailure("rdma_listen", Native.lastErrno(), address);
      }
      return listener;
    } catch (Throwable t) {
      if (listener != null) {
        closeQuietly(listener); // closes the id, drops the loop user
      } else {
        closeQuietly(id);
        provider.releaseLoop(loop);
      }
      throw RdmaCm.rethrow(t);
    }
  }

  private static RuntimeException listenFailure(String function, int errno, InetSocketAddress address) {
    NativeCallException cause = Native.failure(function, errno);
    return switch (errno) {
      case NativeCallException.EADDRINUSE -> new ConnectionException(ConnectionException.Reason.ADDRESS_IN_USE,
          function + " failed: address " + address + " is already in use", cause);
      case NativeCallException.ENODEV, NativeCallException.EADDRNOTAVAIL -> new ConnectionException(
          ConnectionException.Reason.UNRESOLVED, function + " failed: no RDMA device has address "
              + address.getAddress().getHostAddress() + " (" + cause.getMessage() + ")", cause);
      default -> cause;
    };
  }

  @Override
  public InetSocketAddress boundAddress() {
    return bound;
  }

  @Override
  public Flux<Endpoint> incoming() {
    return Flux.create(s -> {
      if (!subscribed.compareAndSet(false, true)) {
        s.error(new IllegalStateException(this + " already has a subscriber"));
        return;
      }
      synchronized (this) {
        if (failure != null) {
          s.error(failure);
          return;
        }
        if (isClosed()) {
          s.complete();
          return;
        }
        sink = s;
      }
      s.onDispose(() -> {
        synchronized (this) {
          if (sink == s) {
            sink = null;
          }
        }
      });
      s.onRequest(n -> drain());
    });
  }

  /** Events of the listening id, on the loop thread. */
  private void onListenEvent(CmEndpoint listening, CmEvent event) {
    if (event.type() == CmEvent.Type.DEVICE_REMOVAL) {
      deviceRemoved();
      return;
    }
    if (event.type() != CmEvent.Type.CONNECT_REQUEST) {
      log.debug("rdma-reactive: {} on {} ignored", event, this);
      return;
    }
    Request r;
    synchronized (this) {
      CmEndpoint cm = new CmEndpoint(MemorySegment.ofAddress(event.id()), "connect request to " + bound);
      r = new Request(cm, event.privateData());
      if (isClosed()) {
        r.dispose(true, false);
        return;
      }
      provider.retainLoop(loop);
      loop.register(cm, r);
      pending.add(r);
    }
    drain();
  }

  /**
   * The device under the listening id is going away: {@link #incoming()} fails, naming the event.
   * The id is destroyed by whoever closes the listener next, off this CM thread: rdma_destroy_id
   * waits for the event to be acknowledged, which happens after this handler returns.
   */
  private void deviceRemoved() {
    FluxSink<Endpoint> s;
    synchronized (this) {
      if (failure != null) {
        return;
      }
      failure = new ConnectionException(ConnectionException.Reason.RESET, "the RDMA device under " + this
          + " was removed (RDMA_CM_EVENT_DEVICE_REMOVAL); it accepts no more connections", null);
      s = sink;
      sink = null;
    }
    log.warn("rdma-reactive: " + failure.getMessage());
    if (s != null) {
      s.error(failure);
    }
  }

  /** Hands pending requests out as endpoints while there is demand; re-entrant calls loop here instead. */
  private synchronized void drain() {
    if (draining) {
      drainAgain = true;
      return;
    }
    draining = true;
    try {
      do {
        drainAgain = false;
        FluxSink<Endpoint> s;
        while ((s = sink) != null && s.requestedFromDownstream() > 0 && !isClosed()) {
          Request r = pending.poll();
          if (r == null) {
            break;
          }
          NativeConnectionEndpoint ep;
          try {
            ep = NativeConnectionEndpoint.create(provider, loop, r.cm, false, bound, options, r.privateData);
          } catch (RuntimeException e) {
            log.warn("rdma-reactive: rejecting a connect request to " + bound + ": could not create its endpoint", e);
            r.dispose(true, true);
            continue;
          }
          r.endpoint = ep;
          s.next(ep);
        }
      } while (drainAgain);
    } finally {
      draining = false;
    }
  }

  /** An event of a request's id before it was handed out: the initiator may give up. */
  private void onRequestEvent(Request r, CmEvent event) {
    NativeConnectionEndpoint ep;
    synchronized (this) {
      ep = r.endpoint;
      if (ep == null) {
        if (!event.type().isConnectFailure() || !pending.remove(r)) {
          return;
        }
      }
    }
    if (ep != null) {
      ep.onCmEvent(event); // raced with the hand-out: the endpoint's handler takes it from here
    } else {
      log.debug("rdma-reactive: a pending connect request to {} went away ({})", bound, event.type());
      r.dispose(false, true);
    }
  }

  @Override
  protected void release() {
    id.close(); // no more requests
    Request r;
    while ((r = pending.poll()) != null) {
      r.dispose(true, true);
    }
    FluxSink<Endpoint> s = sink;
    sink = null;
    if (s != null) {
      s.complete();
    }
    if (!loopReleased) {
      loopReleased = true;
      provider.releaseLoop(loop);
    }
  }

  @Override
  protected String closeFunction() {
    return "rdma_destroy_id";
  }

  /** A connect request's new id, not yet an endpoint. */
  private final class Request implements CmEventLoop.Handler {
    final CmEndpoint cm;
    final byte[] privateData;
    @Nullable NativeConnectionEndpoint endpoint; // guarded by the listener

    Request(CmEndpoint cm, byte[] privateData) {
      this.cm = cm;
      this.privateData = privateData;
    }

    @Override
    public void onEvent(CmEndpoint id, CmEvent event) {
      onRequestEvent(this, event);
    }

    /** Rejects (when asked) and destroys the id; drops its loop user when it holds one. */
    void dispose(boolean reject, boolean heldLoop) {
      if (reject) {
        try {
          cm.reject(new byte[0]);
        } catch (RuntimeException e) {
          log.debug("rdma-reactive: rejecting a connect request to " + bound + ": " + e.getMessage());
        }
      }
      closeQuietly(cm);
      if (heldLoop) {
        provider.releaseLoop(loop);
      }
    }
  }
}
