package io.rdmareactive.rdma.rdmacore;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.rdmareactive.rdma.RdmaException;
import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.spi.EndpointOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.jspecify.annotations.Nullable;

/**
 * One RDMA CM id (struct rdma_cm_id*): connection management (connect, accept, reject,
 * disconnect, address and route resolution) and, once it has one, its queue pair. Closing
 * destroys it all (rdma_destroy_ep); memory regions registered on it must be closed first.
 * Asynchronous use goes through a {@link CmEventLoop}; without one, connect and accept block, as
 * {@link BlockingEndpoint} (the rdma_verbs.h data path over this id) uses them. Native calls run
 * under this object's lock, so {@link #close()} from another thread never frees memory a call uses.
 */
final class CmEndpoint extends AbstractRdmaResource {
  private final MemorySegment id;
  private @Nullable CmQueuePairOptions capabilities;
  private byte[] peerPrivateData = new byte[0];
  private volatile @Nullable CmEventLoop loop;
  private volatile CmEventLoop.@Nullable Handler handler;

  /** Wraps a live id; from here on this object owns it. */
  CmEndpoint(MemorySegment id, String description) {
    super(description + " (rdma_cm_id 0x" + Long.toHexString(id.address()) + ")", null);
    this.id = id.reinterpret(CmLayout.SIZEOF_CM_ID);
  }

  /**
   * The active side (rdma_create_ep): resolves address and route (blocking, up to librdmacm's
   * 2 s each) and creates the RC QP on the device's default PD ({@link BlockingEndpoint}'s path).
   */
  static CmEndpoint create(CmAddressInfo address, CmQueuePairOptions qp) {
    if (address.isPassive()) {
      throw new IllegalArgumentException("a passive address makes a listener: use BlockingListener");
    }
    try (Arena a = Arena.ofConfined()) {
      MemorySegment attr = qp.toNative(a, MemorySegment.NULL);
      MemorySegment out = a.allocate(ADDRESS);
      int rc = (int) Librdmacm.CREATE_EP.invokeExact(Native.callState(), out, address.segment(),
          MemorySegment.NULL, attr);
      if (rc != 0) {
        throw RdmaCm.connectFailure("rdma_create_ep", Native.lastErrno(), "resolving " + address);
      }
      CmEndpoint ep = new CmEndpoint(out.get(ADDRESS, 0), "active endpoint to " + address);
      ep.capabilities = CmQueuePairOptions.fromNative(attr);
      return ep;
    } catch (Throwable t) {
      throw RdmaCm.rethrow(t);
    }
  }

  /** The struct rdma_cm_id*. */
  MemorySegment id() {
    return id;
  }

  long idAddress() {
    return id.address();
  }

  /** id->verbs (struct ibv_context*), NULL until the id is bound to a device. */
  synchronized MemorySegment verbsContext() {
    ensureOpen();
    return id.get(ADDRESS, CmLayout.CM_ID_VERBS);
  }

  /** The QP number, or -1 before a QP exists. */
  synchronized int queuePairNumber() {
    ensureOpen();
    MemorySegment qp = id.get(ADDRESS, CmLayout.CM_ID_QP);
    return qp.equals(MemorySegment.NULL) ? -1 : qp.reinterpret(VerbsLayout.SIZEOF_QP).get(JAVA_INT, VerbsLayout.QP_QP_NUM);
  }

  /** id->port_num: the device port the id is bound to (0 before it has a device). */
  synchronized int portNumber() {
    ensureOpen();
    return Byte.toUnsignedInt(id.get(JAVA_BYTE, CmLayout.CM_ID_PORT_NUM));
  }

  /** The capabilities the QP was created with (as the device granted them), null before it exists. */
  synchronized @Nullable CmQueuePairOptions capabilities() {
    return capabilities;
  }

  /**
   * The peer's private data: of its connect request (accepted side) or of its accept (active side,
   * after {@link #connect} or the loop's ESTABLISHED). InfiniBand/RoCE pad it with zeros.
   */
  synchronized byte[] peerPrivateData() {
    return peerPrivateData.clone();
  }

  synchronized void peerPrivateData(byte[] data) {
    peerPrivateData = data.clone();
  }

  // ---- connection management ------------------------------------------------------------

  /**
   * rdma_connect, blocking until the peer accepts (or rejects) when this id has no event loop;
   * on a loop-attached id it only starts the handshake.
   *
   * @return the private data of the peer's accept (empty on an attached id: see ESTABLISHED)
   * @throws io.rdmareactive.rdma.ConnectionException REFUSED, UNREACHABLE, TIMED_OUT, ...
   */
  synchronized byte[] connect(byte[] privateData) {
    return connect(privateData, EndpointOptions.DEFAULT_RETRY_COUNT, EndpointOptions.DEFAULT_RNR_RETRY);
  }

  /** {@link #connect(byte[])} with the QP's transport and RNR retry counts. */
  synchronized byte[] connect(byte[] privateData, int retryCount, int rnrRetry) {
    ensureOpen();
    try (Arena a = Arena.ofConfined()) {
      MemorySegment param = RdmaCm.connParam(a, privateData, retryCount, rnrRetry);
      int rc = (int) Librdmacm.CONNECT.invokeExact(Native.callState(), id, param);
      if (rc != 0) {
        throw RdmaCm.connectFailure("rdma_connect", Native.lastErrno(), "connecting " + this);
      }
      if (loop == null) {
        peerPrivateData = eventPrivateData();
      }
      return peerPrivateData.clone();
    } catch (Throwable t) {
      throw RdmaCm.rethrow(t);
    }
  }

  /** rdma_accept of the request this endpoint came from (blocking until ESTABLISHED without a loop). */
  synchronized void accept(byte[] privateData) {
    accept(privateData, EndpointOptions.DEFAULT_RETRY_COUNT, EndpointOptions.DEFAULT_RNR_RETRY);
  }

  /** {@link #accept(byte[])} with the QP's transport and RNR retry counts. */
  synchronized void accept(byte[] privateData, int retryCount, int rnrRetry) {
    ensureOpen();
    try (Arena a = Arena.ofConfined()) {
      MemorySegment param = RdmaCm.connParam(a, privateData, retryCount, rnrRetry);
      int rc = (int) Librdmacm.ACCEPT.invokeExact(Native.callState(), id, param);
      if (rc != 0) {
        throw RdmaCm.connectFailure("rdma_accept", Native.lastErrno(), "accepting " + this);
      }
    } catch (Throwable t) {
      throw RdmaCm.rethrow(t);
    }
  }

  /** rdma_reject of the request this endpoint came from; close it afterwards. */
  synchronized void reject(byte[] privateData) {
    ensureOpen();
    if (privateData.length > 255) {
      throw new IllegalArgumentException("reject private data is at most 255 bytes (148 on InfiniBand/RoCE)");
    }
    try (Arena a = Arena.ofConfined()) {
      MemorySegment data = privateData.length == 0 ? MemorySegment.NULL : a.allocateFrom(JAVA_BYTE, privateData);
      int rc = (int) Librdmacm.REJECT.invokeExact(Native.callState(), id, data, (byte) privateData.length);
      if (rc != 0) {
        throw RdmaCm.failure("rdma_reject");
      }
    } catch (Throwable t) {
      throw RdmaCm.rethrow(t);
    }
  }

  /**
   * rdma_disconnect: the QP goes to ERROR (outstanding work completes flushed) and the peer gets
   * DISCONNECTED. Without a loop it waits for the disconnect to complete.
   */
  synchronized void disconnect() {
    ensureOpen();
    try {
      int rc = (int) Librdmacm.DISCONNECT.invokeExact(Native.callState(), id);
      if (rc != 0) {
        throw RdmaCm.failure("rdma_disconnect");
      }
    } catch (Throwable t) {
      throw RdmaCm.rethrow(t);
    }
  }

  /** rdma_resolve_route (asynchronous ids). */
  synchronized void resolveRoute(int timeoutMillis) {
    ensureOpen();
    try {
      int rc = (int) Librdmacm.RESOLVE_ROUTE.invokeExact(Native.callState(), id, timeoutMillis);
      if (rc != 0) {
        throw RdmaCm.connectFailure("rdma_resolve_route", Native.lastErrno(), "resolving a route for " + this);
      }
    } catch (Throwable t) {
      throw RdmaCm.rethrow(t);
    }
  }

  /** rdma_resolve_addr to {@code address}'s destination (asynchronous ids). */
  synchronized void resolveAddress(CmAddressInfo address, int timeoutMillis) {
    ensureOpen();
    try {
      int rc = (int) Librdmacm.RESOLVE_ADDR.invokeExact(Native.callState(), id, address.sourceAddress(),
          address.destinationAddress(), timeoutMillis);
      if (rc != 0) {
        throw RdmaCm.connectFailure("rdma_resolve_addr", Native.lastErrno(), "resolving " + address);
      }
    } catch (Throwable t) {
      throw RdmaCm.rethrow(t);
    }
  }

  /** rdma_create_qp on this id ({@code pd} null: the device's default PD); librdmacm creates the CQs. */
  synchronized void createQueuePair(@Nullable MemorySegment pd, CmQueuePairOptions options) {
    ensureOpen();
    if (!id.get(ADDRESS, CmLayout.CM_ID_QP).equals(MemorySegment.NULL)) {
      throw new IllegalStateException(this + " already has a queue pair");
    }
    try (Arena a = Arena.ofConfined()) {
      MemorySegment attr = options.toNative(a, MemorySegment.NULL);
      int rc = (int) Librdmacm.CREATE_QP.invokeExact(Native.callState(), id,
          (MemorySegment) (pd == null ? MemorySegment.NULL : pd), attr);
      if (rc != 0) {
        throw RdmaCm.failure("rdma_create_qp");
      }
      capabilities = CmQueuePairOptions.fromNative(attr);
    } catch (Throwable t) {
      throw RdmaCm.rethrow(t);
    }
  }

  /** rdma_migrate_id onto {@code channel} (a struct rdma_event_channel*). */
  synchronized void migrate(MemorySegment channel) {
    ensureOpen();
    try {
      int rc = (int) Librdmacm.MIGRATE_ID.invokeExact(Native.callState(), id, channel);
      if (rc != 0) {
        throw RdmaCm.failure("rdma_migrate_id");
      }
    } catch (Throwable t) {
      throw RdmaCm.rethrow(t);
    }
  }

  void attached(@Nullable CmEventLoop loop, CmEventLoop.@Nullable Handler handler) {
    this.loop = loop;
    this.handler = handler;
  }

  CmEventLoop.@Nullable Handler handler() {
    return handler;
  }

  void handler(CmEventLoop.@Nullable Handler handler) {
    this.handler = handler;
  }

  /** The private data of the event a blocking call left in id->event (request or ESTABLISHED). */
  byte[] eventPrivateData() {
    MemorySegment event = id.get(ADDRESS, CmLayout.CM_ID_EVENT);
    return event.equals(MemorySegment.NULL) ? new byte[0] : CmEvent.copyOf(event).privateData();
  }

  @Override
  protected void release() {
    CmEventLoop l = loop;
    if (l != null) {
      l.forget(this);
    }
    StrandedDevicePd.remember(id);
    try {
      Librdmacm.DESTROY_EP.invokeExact(id);
    } catch (Throwable t) {
      throw new RdmaException("rdma_destroy_ep failed", t);
    }
  }

  @Override
  protected String closeFunction() {
    return "rdma_destroy_ep";
  }
}
