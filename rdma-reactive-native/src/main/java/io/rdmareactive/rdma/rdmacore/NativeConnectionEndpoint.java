package io.rdmareactive.rdma.rdmacore;

import static java.lang.foreign.ValueLayout.ADDRESS;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.ResourceClosedException;
import io.rdmareactive.rdma.spi.AbstractEndpoint;
import io.rdmareactive.rdma.spi.EndpointOptions;
import io.rdmareactive.rdma.verbs.AsyncEvent;
import io.rdmareactive.rdma.verbs.PortAttributes;
import io.rdmareactive.rdma.verbs.SharedReceiveQueue;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * An endpoint over an RDMA CM id on the provider's event loop. Its verbs objects are its own, on
 * the id's device context (id->verbs, borrowed: librdmacm keeps it open): a PD, a completion
 * channel, one CQ for both work queues, and an RC QP made by rdma_create_qp on that PD and CQ,
 * which leaves it in INIT. rdma_connect / rdma_accept then drive it to RTS; the CM events of the
 * id arrive here on the loop thread.
 *
 * <p>Closing: disconnect (or reject, for a request never accepted), then rdma_destroy_qp, the CQ,
 * the channel, the PD, rdma_destroy_id; the borrowed context is left open.
 */
final class NativeConnectionEndpoint extends AbstractEndpoint {
  private static final Logger log = Loggers.getLogger(NativeConnectionEndpoint.class);

  private enum State { INIT, ESTABLISHING, ESTABLISHED, FAILED }

  private final NativeConnectionProvider provider;
  private final CmEventLoop loop;
  private final CmEndpoint cm;
  /** id->verbs, the device context whose async events {@link AsyncEventRouter} routes here. */
  private final MemorySegment verbs;
  private final long queuePairAddress;
  private final long completionQueueAddress;
  private final int portNumber;
  private boolean routed;
  /** The device async event that failed this connection, once one did. */
  private volatile @Nullable String asyncFault;
  /** Taken by the first async event that fails this connection (the CM loop's thread); later ones are not news. */
  private final AtomicBoolean faultClaimed = new AtomicBoolean();
  // guarded by this
  private State state = State.INIT;
  private @Nullable MonoSink<Void> establishing;
  private boolean disconnected;
  private boolean peerGone;
  private boolean loopReleased;

  private NativeConnectionEndpoint(NativeConnectionProvider provider, CmEventLoop loop, CmEndpoint cm,
      boolean activeSide, InetSocketAddress address, EndpointOptions options, byte[] remotePrivateData, Parts parts) {
    super("native " + (activeSide ? "active endpoint to " : "passive endpoint on ") + address
        + " (rdma_cm_id 0x" + Long.toHexString(cm.idAddress()) + ")", activeSide, address, options, remotePrivateData,
        parts);
    this.provider = provider;
    this.loop = loop;
    this.cm = cm;
    this.verbs = cm.verbsContext();
    this.queuePairAddress = ((NativeQueuePair) parts.qp()).qp.address();
    this.completionQueueAddress = ((NativeCompletionQueue) parts.cq()).cq.address();
    this.portNumber = cm.portNumber();
  }

  /**
   * Creates the verbs objects on {@code cm} (route resolved, or a connect request) and takes it
   * over, with the loop user the caller holds: from here on closing the endpoint frees both. On
   * failure the caller still owns {@code cm} and its loop user.
   */
  static NativeConnectionEndpoint create(NativeConnectionProvider provider, CmEventLoop loop, CmEndpoint cm,
      boolean activeSide, InetSocketAddress address, EndpointOptions options, byte[] remotePrivateData) {
    MemorySegment verbs = cm.verbsContext();
    if (verbs.equals(MemorySegment.NULL)) {
      throw new ConnectionException(ConnectionException.Reason.UNRESOLVED,
          "no RDMA device serves " + address + " (the CM id has no device)", null);
    }
    NativeContext ctx = NativeContext.borrow(verbs);
    Parts parts = createParts(ctx, ctx.deviceName(), options, (pd, cq, srq) ->
        createQueuePair(cm, (NativeProtectionDomain) pd, (NativeCompletionQueue) cq, nativeSrq(srq), options));
    try {
      NativeConnectionEndpoint ep = new NativeConnectionEndpoint(provider, loop, cm, activeSide, address, options,
          remotePrivateData, parts);
      cm.handler((id, event) -> ep.onCmEvent(event));
      loop.asyncEvents().register(ep, verbs, ctx.deviceName());
      ep.routed = true;
      return ep;
    } catch (RuntimeException | Error e) {
      parts.discard(options);
      throw e;
    }
  }

  private static @Nullable NativeSharedReceiveQueue nativeSrq(@Nullable SharedReceiveQueue srq) {
    if (srq != null && !(srq instanceof NativeSharedReceiveQueue)) {
      throw new IllegalArgumentException("SRQ " + srq + " is not a native one");
    }
    return (NativeSharedReceiveQueue) srq;
  }

  /**
   * rdma_create_qp on {@code pd} with {@code cq} for both queues, receives from {@code srq} when
   * not null: RC, selective signaling, in INIT.
   */
  private static NativeQueuePair createQueuePair(CmEndpoint cm, NativeProtectionDomain pd, NativeCompletionQueue cq,
      @Nullable NativeSharedReceiveQueue srq, EndpointOptions o) {
    MemorySegment qp;
    int sendSge;
    int recvSge;
    int inline;
    try (Arena a = Arena.ofConfined()) {
      QpInitAttr attr = new QpInitAttr(a).queues(cq.cq, cq.cq, srq == null ? MemorySegment.NULL : srq.srq)
          .capabilities(o.sendQueueDepth(), srq == null ? o.receiveQueueDepth() : 0, EndpointOptions.SEND_SCATTER_GATHER,
              srq == null ? 1 : 0,
              o.maxInlineData())
          .type((int) CmLayout.IBV_QPT_RC, false);
      synchronized (cm) {
        cm.ensureOpen();
        int rc = (int) Librdmacm.CREATE_QP.invokeExact(Native.callState(), cm.id(), pd.pd, attr.segment());
        if (rc != 0) {
          throw Native.failure("rdma_create_qp", Native.lastErrno(), "for " + cm);
        }
        qp = cm.id().get(ADDRESS, CmLayout.CM_ID_QP);
      }
      // ibv_create_qp wrote back what the device granted (inline data may be rounded up).
      sendSge = attr.maxSendSge();
      recvSge = attr.maxRecvSge();
      inline = attr.maxInlineData();
    } catch (Throwable t) {
      throw RdmaCm.rethrow(t);
    }
    NativeQueuePair.AdoptedDestroy destroy = new NativeQueuePair.AdoptedDestroy() {
      @Override
      public void destroy() {
        synchronized (cm) {
          if (cm.isClosed()) {
            return; // rdma_destroy_ep took the QP with the id
          }
          try {
            Librdmacm.DESTROY_QP.invokeExact(cm.id());
          } catch (Throwable t) {
            throw RdmaCm.rethrow(t);
          }
        }
      }

      @Override
      public String function() {
        return "rdma_destroy_qp";
      }
    };
    try {
      return NativeQueuePair.adopt(pd, qp, cq, srq, o.sendQueueDepth(), o.receiveQueueDepth(), Math.max(1, sendSge),
          Math.max(1, recvSge), Math.max(0, inline), destroy);
    } catch (RuntimeException | Error e) {
      destroy.destroy();
      throw e;
    }
  }

  @Override
  public Mono<Void> establish() {
    return Mono.create(sink -> {
      Throwable early = null;
      synchronized (this) {
        if (isClosed()) {
          early = new ResourceClosedException(toString());
        } else if (state != State.INIT) {
          early = new IllegalStateException(this + " was already established (or is being)");
        } else if (disconnected || peerGone) {
          state = State.FAILED;
          early = reset(peerGone ? "the initiator gave up before it was accepted" : "disconnected before it was established");
        } else {
          state = State.ESTABLISHING;
          establishing = sink;
        }
      }
      if (early != null) {
        sink.error(early);
        return;
      }
      sink.onCancel(() -> {
        synchronized (this) {
          if (establishing == sink) {
            establishing = null;
          }
        }
      });
      try {
        // Non-blocking: the id is on the loop's channel, the outcome arrives as a CM event.
        if (activeSide) {
          cm.connect(options.privateData(), options.retryCount(), options.rnrRetry());
        } else {
          cm.accept(options.privateData(), options.retryCount(), options.rnrRetry());
        }
      } catch (RuntimeException e) {
        failEstablish(e instanceof ConnectionException c ? c : activeSide
            ? new ConnectionException(ConnectionException.Reason.UNREACHABLE, "connecting " + this + ": "
                + e.getMessage(), e)
            : reset("accepting failed: " + e.getMessage(), e));
      }
    });
  }

  /** A CM event of this id, on the loop thread. */
  void onCmEvent(CmEvent event) {
    switch (event.type()) {
      case ESTABLISHED -> {
        if (activeSide) {
          remotePrivateData(event.privateData());
        }
        MonoSink<Void> s;
        synchronized (this) {
          if (state == State.ESTABLISHING) {
            state = State.ESTABLISHED;
          }
          s = establishing;
          establishing = null;
        }
        if (s != null) {
          s.success();
        }
      }
      case REJECTED -> {
        if (activeSide) {
          remotePrivateData(event.privateData()); // the listener's reason, when it gave one
        }
        gone(activeSide
          ? new ConnectionException(ConnectionException.Reason.REFUSED, "connection to " + address
              + " refused (reject reason " + event.status() + ": nobody listens there, or the listener rejected it)",
              null)
          : reset("the initiator gave up before the connection was established"), false);
      }
      case CONNECT_ERROR, UNREACHABLE -> gone(new ConnectionException(ConnectionException.Reason.UNREACHABLE,
          (activeSide ? "connecting to " : "accepting on ") + address + ": " + RdmaCm.eventName(event.type().ordinal())
              + (event.status() == 0 ? "" : " (status " + event.status() + ")"), null), false);
      case DISCONNECTED -> gone(reset("the peer disconnected before the connection was established"), false);
      case DEVICE_REMOVAL -> gone(reset("the RDMA device was removed (RDMA_CM_EVENT_DEVICE_REMOVAL)"), true);
      default -> log.debug("rdma-reactive: {} on {} ignored", event, this);
    }
  }

  /** The CM loop's thread: whether this is the first async event to fail this connection. */
  boolean claimAsyncFault() {
    return faultClaimed.compareAndSet(false, true);
  }

  /**
   * A device async event that concerns this connection ({@code event} names it, e.g. "IBV_EVENT_PORT_ERR
   * on rxe0 port 1"), on the loop thread: the connection fails as on device removal.
   */
  void asyncFault(String event) {
    asyncFault = event;
    gone(reset(event), true);
  }

  /**
   * A link that goes down fails the work in flight at once (rxe: LOC_QP_OP_ERR), often before the
   * CM loop has read IBV_EVENT_PORT_ERR: a failure while the port is not ACTIVE is that event.
   */
  @Override
  public @Nullable ConnectionException faultBehind(@Nullable Throwable failure) {
    String event = asyncFault;
    if (event == null) {
      int port = portNumber == 0 ? 1 : portNumber; // an id without a port: the device's first
      try {
        if (context().queryPort(port).state() == PortAttributes.PortState.ACTIVE) {
          return null;
        }
      } catch (RuntimeException e) {
        return null; // closing: the completion's own error it is
      }
      event = AsyncEventRouter.describe(AsyncEvent.Type.PORT_ERR, AsyncEvent.Type.PORT_ERR.ordinal(), port,
          context().deviceName());
    }
    return reset(event, failure);
  }

  long queuePairAddress() {
    return queuePairAddress;
  }

  long completionQueueAddress() {
    return completionQueueAddress;
  }

  /** The device port of the CM id (id->port_num). */
  int portNumber() {
    return portNumber;
  }

  /**
   * The connection is over from the CM's side: a pending establish fails, then as {@link
   * #disconnect()}; a {@code fault} (not the peer's doing) errors onDisconnect with the exception.
   */
  private void gone(ConnectionException ifEstablishing, boolean fault) {
    boolean established;
    synchronized (this) {
      peerGone = true;
      established = state == State.ESTABLISHED;
    }
    failEstablish(ifEstablishing);
    if (established) {
      // The owner answers the peer's DREQ with disconnect(), which flushes the QP, from its own
      // thread after its last post. Moving the QP to ERROR here, on the CM thread, raced the
      // receives the owner was still posting, and on rxe a receive posted after the flush pass
      // never completes: closes then waited for flush completions that never came.
      if (fault) {
        onDisconnect.tryEmitError(ifEstablishing);
      } else {
        onDisconnect.tryEmitEmpty();
      }
    } else {
      disconnect(); // rejects or abandons the attempt and flushes what was posted for it
    }
  }

  /*
   * onDisconnect completes before the QP goes to ERROR, here and in disconnect(): whoever watches
   * both then knows the flush completions that follow are the disconnect, not a fault.
   */

  private void failEstablish(Throwable e) {
    MonoSink<Void> s;
    synchronized (this) {
      if (state == State.ESTABLISHING) {
        state = State.FAILED;
      }
      s = establishing;
      establishing = null;
    }
    if (s != null) {
      s.error(e);
    }
  }

  @Override
  public void disconnect() {
    boolean reject;
    synchronized (this) {
      if (disconnected) {
        return;
      }
      disconnected = true;
      reject = !activeSide && state == State.INIT && !peerGone;
    }
    failEstablish(reset("disconnected while establishing"));
    onDisconnect.tryEmitEmpty();
    try {
      if (reject) {
        cm.reject(rejectData());
        queuePair().toError(); // flushes receives posted before the accept that never came
      } else {
        cm.disconnect(); // librdmacm moves the QP to ERROR first, then tells the peer
      }
    } catch (RuntimeException e) {
      // Not (or no longer) connected: the CM refuses, the QP still has to flush.
      log.debug("rdma-reactive: disconnecting " + this + ": " + e.getMessage());
      try {
        queuePair().toError();
      } catch (RuntimeException ignored) {
        // closed: nothing left to flush
      }
    }
  }

  @Override
  protected void abortEstablish() {
    failEstablish(new ResourceClosedException(this + " (closed while establishing)"));
  }

  /** rdma_destroy_id, then the loop user this endpoint held. */
  @Override
  protected void releaseConnection() {
    if (routed) {
      routed = false;
      loop.asyncEvents().unregister(this, verbs);
    }
    cm.close();
    if (!loopReleased) {
      loopReleased = true;
      provider.releaseLoop(loop);
    }
  }

  private ConnectionException reset(String why) {
    return reset(why, null);
  }

  private ConnectionException reset(String why, @Nullable Throwable cause) {
    return new ConnectionException(ConnectionException.Reason.RESET, this + ": " + why, cause);
  }
}
