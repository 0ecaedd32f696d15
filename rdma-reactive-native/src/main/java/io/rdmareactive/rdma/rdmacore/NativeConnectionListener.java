package io.rdmareactive.rdma.rdmacore;

import static java.lang.foreign.ValueLayout.ADDRESS;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.spi.AbstractListener;
import io.rdmareactive.rdma.spi.Endpoint;
import io.rdmareactive.rdma.spi.EndpointOptions;
import io.rdmareactive.rdma.spi.ListenLimits;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import org.jspecify.annotations.Nullable;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * A listening RDMA CM id on the provider's event loop (rdma_create_id, rdma_bind_addr,
 * rdma_listen). Each RDMA_CM_EVENT_CONNECT_REQUEST brings a new id, which waits in the
 * {@link AbstractListener}'s bounded queue with nothing built for it; only its taker's
 * {@link Request#createEndpoint()}, off the CM thread, makes a {@link NativeConnectionEndpoint}
 * (PD, CQ, QP). A waiting request whose initiator gives up (REJECTED, say) is destroyed.
 */
final class NativeConnectionListener extends AbstractListener<NativeConnectionListener.Request> {
  private static final Logger log = Loggers.getLogger(NativeConnectionListener.class);
  private static final int BACKLOG = 64;

  private final NativeConnectionProvider provider;
  private final CmEventLoop loop;
  private final CmEndpoint id;
  private final InetSocketAddress bound;
  private final EndpointOptions options;
  private boolean loopReleased; // guarded by this

  private NativeConnectionListener(NativeConnectionProvider provider, CmEventLoop loop, CmEndpoint id,
      InetSocketAddress bound, EndpointOptions options, ListenLimits limits) {
    super("native listener on " + bound, limits);
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
      EndpointOptions options, ListenLimits limits) {
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
          options, limits);
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

  /** Events of the listening id, on the loop thread. */
  private void onListenEvent(CmEndpoint listening, CmEvent event) {
    if (event.type() == CmEvent.Type.DEVICE_REMOVAL) {
      // The id is destroyed by whoever closes the listener next, off this CM thread:
      // rdma_destroy_id waits for the event to be acknowledged, which happens after this returns.
      ConnectionException why = new ConnectionException(ConnectionException.Reason.RESET, "the RDMA device under "
          + this + " was removed (RDMA_CM_EVENT_DEVICE_REMOVAL); it accepts no more connections", null);
      if (!failed()) {
        log.warn("rdma-reactive: " + why.getMessage());
      }
      fail(why);
      return;
    }
    if (event.type() != CmEvent.Type.CONNECT_REQUEST) {
      log.debug("rdma-reactive: {} on {} ignored", event, this);
      return;
    }
    CmEndpoint cm = new CmEndpoint(MemorySegment.ofAddress(event.id()), "connect request to " + bound);
    Request r = new Request(cm, event);
    provider.retainLoop(loop);
    loop.register(cm, r);
    offer(r); // waits, or is rejected at once: nothing but the id exists for it either way
  }

  @Override
  protected void stopListening() {
    id.close(); // no more requests
  }

  @Override
  protected void released() {
    synchronized (this) {
      if (loopReleased) {
        return;
      }
      loopReleased = true;
    }
    provider.releaseLoop(loop);
  }

  @Override
  protected String closeFunction() {
    return "rdma_destroy_id";
  }

  /** A connect request's new id, with nothing built for it until {@link #createEndpoint()}. */
  final class Request extends AbstractListener.Request implements CmEventLoop.Handler {
    private final CmEndpoint cm;
    private volatile @Nullable NativeConnectionEndpoint endpoint;
    private volatile boolean gaveUp;

    Request(CmEndpoint cm, CmEvent event) {
      super(event.privateData(), event.retryCount(), event.rnrRetry());
      this.cm = cm;
    }

    @Override
    protected boolean gone() {
      return gaveUp;
    }

    @Override
    protected Endpoint newEndpoint() {
      if (loop.inLoop()) {
        throw new IllegalStateException("an endpoint is built off the rdma-cm thread (it blocks; that thread serves"
            + " every connection of the process)");
      }
      NativeConnectionEndpoint ep = NativeConnectionEndpoint.create(provider, loop, cm, false, bound, options,
          privateData());
      provider.passiveEndpointBuilt();
      endpoint = ep;
      return ep;
    }

    @Override
    protected void free(byte @Nullable [] rejectWith) {
      if (rejectWith != null) {
        try {
          cm.reject(rejectWith);
        } catch (RuntimeException e) {
          log.debug("rdma-reactive: rejecting a connect request to " + bound + ": " + e.getMessage());
        }
      }
      closeQuietly(cm);
      provider.releaseLoop(loop);
    }

    /** An event of this request's id before it was built: the initiator may give up. */
    @Override
    public void onEvent(CmEndpoint id, CmEvent e) {
      NativeConnectionEndpoint ep = endpoint;
      if (ep != null) {
        ep.onCmEvent(e); // raced with the build: the endpoint's handler takes it from here
      } else if (e.type().isConnectFailure()) {
        gaveUp = true;
        if (withdraw(this)) {
          log.debug("rdma-reactive: a pending connect request to {} went away ({})", bound, e.type());
        }
      }
    }
  }
}
