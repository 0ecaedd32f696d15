package io.rdmareactive.rdma.nativ;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.RdmaException;
import io.rdmareactive.rdma.internal.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * One RDMA CM id (struct rdma_cm_id*) with, once connected or accepted, its RC queue pair, the
 * send and receive CQs librdmacm created for it and their completion channels. Closing destroys it
 * all (rdma_destroy_ep); memory regions registered on it must be closed first.
 *
 * <p>Blocking use follows rdma_verbs.h: {@link #connect} / {@link CmListener#getRequest} and
 * {@link #accept}, then {@link #postReceive} / {@link #postSend} and {@link #receiveCompletion} /
 * {@link #sendCompletion}. Asynchronous use goes through a {@link CmEventLoop}. Native calls run
 * under this object's lock, so {@link #close()} from another thread never frees memory a call is
 * using; waits for completions or events happen outside it, in slices, and notice a close.
 */
final class CmEndpoint extends AbstractRdmaResource {
  /** Longest single wait, so a wait notices {@link #close()} from another thread soon. */
  private static final int WAIT_SLICE_MILLIS = 50;

  private final MemorySegment id;
  private final Arena arena = Arena.ofShared();
  // Per-direction scratch (struct ibv_send_wr/ibv_recv_wr + one ibv_sge + bad_wr, ibv_wc, get_cq_event outs).
  private final MemorySegment sendWr;
  private final MemorySegment sendSge;
  private final MemorySegment recvWr;
  private final MemorySegment recvSge;
  private final MemorySegment badWr;
  private final MemorySegment sendWc;
  private final MemorySegment recvWc;
  private final MemorySegment cqEventOut;
  private @Nullable CmQueuePairOptions capabilities;
  private byte[] peerPrivateData = new byte[0];
  private volatile @Nullable CmEventLoop loop;
  private volatile CmEventLoop.@Nullable Handler handler;

  // Cached once the QP exists: pointers and the ops-table entries of id->verbs.
  private MemorySegment qp = MemorySegment.NULL;
  private MemorySegment srq = MemorySegment.NULL;
  private MemorySegment sendCq = MemorySegment.NULL;
  private MemorySegment recvCq = MemorySegment.NULL;
  private MemorySegment sendChannel = MemorySegment.NULL;
  private MemorySegment recvChannel = MemorySegment.NULL;
  private int sendChannelFd = -1;
  private int recvChannelFd = -1;
  private MemorySegment postSendFn = MemorySegment.NULL;
  private MemorySegment postRecvFn = MemorySegment.NULL;
  private MemorySegment sendPollFn = MemorySegment.NULL;
  private MemorySegment sendNotifyFn = MemorySegment.NULL;
  private MemorySegment recvPollFn = MemorySegment.NULL;
  private MemorySegment recvNotifyFn = MemorySegment.NULL;

  /** Wraps a live id; from here on this object owns it. */
  CmEndpoint(MemorySegment id, String description) {
    super(description + " (rdma_cm_id 0x" + Long.toHexString(id.address()) + ")", null);
    this.id = id.reinterpret(CmLayout.SIZEOF_CM_ID);
    sendWr = arena.allocate(VerbsLayout.SIZEOF_SEND_WR, 8);
    sendSge = arena.allocate(VerbsLayout.SIZEOF_SGE, 8);
    recvWr = arena.allocate(VerbsLayout.SIZEOF_RECV_WR, 8);
    recvSge = arena.allocate(VerbsLayout.SIZEOF_SGE, 8);
    badWr = arena.allocate(ADDRESS);
    sendWc = arena.allocate(VerbsLayout.SIZEOF_WC, 8);
    recvWc = arena.allocate(VerbsLayout.SIZEOF_WC, 8);
    cqEventOut = arena.allocate(ADDRESS.byteSize() * 2, 8);
    RdmaCm.LIVE.incrementAndGet();
    if (!this.id.get(ADDRESS, CmLayout.CM_ID_QP).equals(MemorySegment.NULL)) {
      cacheQueuePair();
    }
  }

  /**
   * The active side (rdma_create_ep): resolves address and route (blocking, up to librdmacm's
   * 2 s each) and creates the RC QP; {@code pd} null means the device's default PD.
   */
  static CmEndpoint create(CmAddressInfo address, @Nullable MemorySegment pd, CmQueuePairOptions qp) {
    if (address.isPassive()) {
      throw new IllegalArgumentException("a passive address makes a listener: use CmListener");
    }
    try (Arena a = Arena.ofConfined()) {
      MemorySegment attr = qp.toNative(a, MemorySegment.NULL);
      MemorySegment out = a.allocate(ADDRESS);
      int rc = (int) Librdmacm.CREATE_EP.invokeExact(Native.callState(), out, address.segment(),
          (MemorySegment) (pd == null ? MemorySegment.NULL : pd), attr);
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

  static CmEndpoint create(CmAddressInfo address, CmQueuePairOptions qp) {
    return create(address, null, qp);
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

  /** id->pd (struct ibv_pd*). */
  synchronized MemorySegment protectionDomain() {
    ensureOpen();
    return id.get(ADDRESS, CmLayout.CM_ID_PD);
  }

  /** id->qp (struct ibv_qp*), NULL before a QP is created. */
  synchronized MemorySegment queuePair() {
    ensureOpen();
    return qp;
  }

  synchronized MemorySegment sendCompletionQueue() {
    ensureOpen();
    return sendCq;
  }

  synchronized MemorySegment receiveCompletionQueue() {
    ensureOpen();
    return recvCq;
  }

  synchronized MemorySegment sendCompletionChannel() {
    ensureOpen();
    return sendChannel;
  }

  synchronized MemorySegment receiveCompletionChannel() {
    ensureOpen();
    return recvChannel;
  }

  /** The QP number, or -1 before a QP exists. */
  synchronized int queuePairNumber() {
    ensureOpen();
    return qp.equals(MemorySegment.NULL) ? -1 : qp.get(JAVA_INT, VerbsLayout.QP_QP_NUM);
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
    ensureOpen();
    try (Arena a = Arena.ofConfined()) {
      MemorySegment param = RdmaCm.connParam(a, privateData);
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
    ensureOpen();
    try (Arena a = Arena.ofConfined()) {
      MemorySegment param = RdmaCm.connParam(a, privateData);
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
    if (!qp.equals(MemorySegment.NULL)) {
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
      cacheQueuePair();
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

  // ---- memory registration (rdma_verbs.h) ---------------------------------------------------

  /** rdma_reg_msgs: local write, for send and receive buffers. */
  synchronized CmMemoryRegion registerMessages(MemorySegment segment) {
    return register(segment, Set.of(Access.LOCAL_WRITE), "rdma_reg_msgs");
  }

  /** rdma_reg_read: local write and remote read. */
  synchronized CmMemoryRegion registerRead(MemorySegment segment) {
    return register(segment, Set.of(Access.LOCAL_WRITE, Access.REMOTE_READ), "rdma_reg_read");
  }

  /** rdma_reg_write: local write and remote write. */
  synchronized CmMemoryRegion registerWrite(MemorySegment segment) {
    return register(segment, Set.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE), "rdma_reg_write");
  }

  private CmMemoryRegion register(MemorySegment segment, Set<Access> access, String function) {
    ensureOpen();
    MemorySegment pd = id.get(ADDRESS, CmLayout.CM_ID_PD);
    if (pd.equals(MemorySegment.NULL)) {
      throw new IllegalStateException(function + ": " + this + " has no protection domain yet (no QP)");
    }
    return CmMemoryRegion.register(this, pd, segment, access, function);
  }

  // ---- posting (rdma_post_recv / rdma_post_send, through id->verbs->ops) -------------------

  /**
   * rdma_post_recv: one receive of {@code length} bytes at {@code offset} of {@code mr};
   * {@code context} comes back as the completion's wr_id. Allocates nothing.
   */
  synchronized void postReceive(long context, CmMemoryRegion mr, long offset, int length) {
    ensureConnectedQp();
    checkBounds(mr, offset, length, "rdma_post_recv");
    recvSge.set(JAVA_LONG, VerbsLayout.SGE_ADDR, mr.address() + offset);
    recvSge.set(JAVA_INT, VerbsLayout.SGE_LENGTH, length);
    recvSge.set(JAVA_INT, VerbsLayout.SGE_LKEY, mr.lkey());
    recvWr.set(JAVA_LONG, VerbsLayout.RECV_WR_WR_ID, context);
    recvWr.set(ADDRESS, VerbsLayout.RECV_WR_NEXT, MemorySegment.NULL);
    recvWr.set(ADDRESS, VerbsLayout.RECV_WR_SG_LIST, recvSge);
    recvWr.set(JAVA_INT, VerbsLayout.RECV_WR_NUM_SGE, 1);
    int rc;
    try {
      // rdma_post_recvv: ibv_post_srq_recv(id->srq) when the id has an SRQ, else ibv_post_recv(id->qp).
      rc = srq.equals(MemorySegment.NULL)
          ? Ibverbs.post(postRecvFn, qp, recvWr, badWr)
          : Ibverbs.post(srqPostRecvFn(), srq, recvWr, badWr);
    } catch (Throwable t) {
      throw RdmaCm.rethrow(t);
    }
    if (rc != 0) {
      throw Native.failure("rdma_post_recv", rc < 0 ? -rc : rc);
    }
  }

  /**
   * rdma_post_send: one SEND of {@code length} bytes at {@code offset} of {@code mr} with
   * {@code flags} (ibv_send_flags: {@link io.rdmareactive.rdma.verbs.SendRequest#SIGNALED}, ...).
   * Allocates nothing.
   */
  synchronized void postSend(long context, CmMemoryRegion mr, long offset, int length, int flags) {
    checkBounds(mr, offset, length, "rdma_post_send");
    postSend(context, mr.address() + offset, length, mr.lkey(), flags);
  }

  /**
   * rdma_post_send with IBV_SEND_INLINE and no memory region: {@code data} (at most the QP's
   * max inline data) is copied into the work request by the provider before this returns.
   */
  synchronized void postSendInline(long context, MemorySegment data, int flags) {
    CmQueuePairOptions caps = capabilities;
    if (caps != null && data.byteSize() > caps.maxInlineData()) {
      throw new IllegalArgumentException("inline send of " + data.byteSize() + " bytes exceeds the QP's "
          + "max inline data of " + caps.maxInlineData());
    }
    if (!data.isNative()) {
      throw new IllegalArgumentException("inline data must be a native segment");
    }
    postSend(context, data.address(), (int) data.byteSize(), 0, flags | (int) CmLayout.IBV_SEND_INLINE);
  }

  private void postSend(long context, long address, int length, int lkey, int flags) {
    ensureConnectedQp();
    sendSge.set(JAVA_LONG, VerbsLayout.SGE_ADDR, address);
    sendSge.set(JAVA_INT, VerbsLayout.SGE_LENGTH, length);
    sendSge.set(JAVA_INT, VerbsLayout.SGE_LKEY, lkey);
    sendWr.set(JAVA_LONG, VerbsLayout.SEND_WR_WR_ID, context);
    sendWr.set(ADDRESS, VerbsLayout.SEND_WR_NEXT, MemorySegment.NULL);
    sendWr.set(ADDRESS, VerbsLayout.SEND_WR_SG_LIST, sendSge);
    sendWr.set(JAVA_INT, VerbsLayout.SEND_WR_NUM_SGE, 1);
    sendWr.set(JAVA_INT, VerbsLayout.SEND_WR_OPCODE, (int) CmLayout.IBV_WR_SEND);
    sendWr.set(JAVA_INT, VerbsLayout.SEND_WR_SEND_FLAGS, flags);
    int rc;
    try {
      rc = Ibverbs.post(postSendFn, qp, sendWr, badWr);
    } catch (Throwable t) {
      throw RdmaCm.rethrow(t);
    }
    if (rc != 0) {
      throw Native.failure("rdma_post_send", rc < 0 ? -rc : rc);
    }
  }

  private static void checkBounds(CmMemoryRegion mr, long offset, int length, String function) {
    // rdma_post_recv asserts this in C; here it is a clear error instead of an abort.
    if (offset < 0 || length < 0 || offset + length > mr.length()) {
      throw new IllegalArgumentException(function + ": [" + offset + ", " + offset + "+" + length
          + ") is outside the memory region of " + mr.length() + " bytes");
    }
    mr.ensureOpen();
  }

  private void ensureConnectedQp() {
    ensureOpen();
    if (qp.equals(MemorySegment.NULL)) {
      throw new IllegalStateException(this + " has no queue pair");
    }
  }

  // ---- completions (rdma_get_send_comp / rdma_get_recv_comp) -------------------------------

  /**
   * rdma_get_send_comp: the next send completion, waiting at most {@code timeoutMillis}
   * (negative: no limit) as rdma_verbs.h does (poll, arm, poll, wait on the channel, ack).
   *
   * @return the completion (check its status), or null on timeout
   */
  @Nullable WorkCompletion sendCompletion(long timeoutMillis) {
    return completion(true, timeoutMillis);
  }

  /** rdma_get_recv_comp: as {@link #sendCompletion}, for the receive CQ. */
  @Nullable WorkCompletion receiveCompletion(long timeoutMillis) {
    return completion(false, timeoutMillis);
  }

  private @Nullable WorkCompletion completion(boolean send, long timeoutMillis) {
    long deadline = timeoutMillis < 0 ? Long.MAX_VALUE : System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    String function = send ? "rdma_get_send_comp" : "rdma_get_recv_comp";
    while (true) {
      int fd;
      synchronized (this) {
        ensureConnectedQp();
        MemorySegment cq = send ? sendCq : recvCq;
        MemorySegment channel = send ? sendChannel : recvChannel;
        MemorySegment poll = send ? sendPollFn : recvPollFn;
        MemorySegment notify = send ? sendNotifyFn : recvNotifyFn;
        MemorySegment wc = send ? sendWc : recvWc;
        fd = send ? sendChannelFd : recvChannelFd;
        try {
          int n = Ibverbs.pollCq(poll, cq, 1, wc);
          if (n == 0 && !channel.equals(MemorySegment.NULL)) {
            int rc = Ibverbs.reqNotifyCq(notify, cq, 0);
            if (rc != 0) {
              throw Native.failure(function, rc < 0 ? -rc : rc, "ibv_req_notify_cq");
            }
            n = Ibverbs.pollCq(poll, cq, 1, wc);
            if (n == 0) {
              // The channel fd is non-blocking: EAGAIN means no event yet, wait outside the lock.
              rc = Ibverbs.getCqEvent(channel, cqEventOut,
                  cqEventOut.asSlice(ADDRESS.byteSize()));
              if (rc == 0) {
                Ibverbs.ackCqEvents(cqEventOut.get(ADDRESS, 0), 1);
                continue;
              }
              int errno = Native.lastErrno();
              if (errno != NativeCallException.EAGAIN) {
                throw Native.failure(function, errno, "ibv_get_cq_event");
              }
            }
          }
          if (n < 0) {
            throw Native.failure(function, n == -1 ? NativeCallException.EIO : -n, "ibv_poll_cq");
          }
          if (n > 0) {
            return toWorkCompletion(wc);
          }
        } catch (Throwable t) {
          throw RdmaCm.rethrow(t);
        }
      }
      long remaining = deadline - System.nanoTime();
      if (remaining <= 0) {
        return null;
      }
      int slice = (int) Math.min(WAIT_SLICE_MILLIS, Math.max(1, TimeUnit.NANOSECONDS.toMillis(remaining)));
      if (fd >= 0) {
        RdmaCm.awaitReadable(fd, -1, slice);
      } else {
        LockSupport.parkNanos(50_000); // caller-supplied CQs without a channel: poll
      }
    }
  }

  private static WorkCompletion toWorkCompletion(MemorySegment wc) {
    int flags = wc.get(JAVA_INT, VerbsLayout.WC_WC_FLAGS);
    boolean imm = (flags & (int) CmLayout.IBV_WC_WITH_IMM) != 0;
    return new WorkCompletion(wc.get(JAVA_LONG, VerbsLayout.WC_WR_ID),
        WorkCompletion.Status.of(wc.get(JAVA_INT, VerbsLayout.WC_STATUS)),
        WorkCompletion.Opcode.of(wc.get(JAVA_INT, VerbsLayout.WC_OPCODE)),
        wc.get(JAVA_INT, VerbsLayout.WC_VENDOR_ERR), wc.get(JAVA_INT, VerbsLayout.WC_BYTE_LEN),
        imm ? Integer.reverseBytes(wc.get(JAVA_INT, VerbsLayout.WC_IMM_DATA)) : 0, imm,
        wc.get(JAVA_INT, VerbsLayout.WC_QP_NUM), wc.get(JAVA_INT, VerbsLayout.WC_SRC_QP));
  }

  private void cacheQueuePair() {
    qp = id.get(ADDRESS, CmLayout.CM_ID_QP).reinterpret(VerbsLayout.SIZEOF_QP);
    srq = id.get(ADDRESS, CmLayout.CM_ID_SRQ);
    sendCq = id.get(ADDRESS, CmLayout.CM_ID_SEND_CQ).reinterpret(VerbsLayout.SIZEOF_CQ);
    recvCq = id.get(ADDRESS, CmLayout.CM_ID_RECV_CQ).reinterpret(VerbsLayout.SIZEOF_CQ);
    sendChannel = id.get(ADDRESS, CmLayout.CM_ID_SEND_CQ_CHANNEL);
    recvChannel = id.get(ADDRESS, CmLayout.CM_ID_RECV_CQ_CHANNEL);
    // As verbs.h: ibv_post_send(qp) is qp->context->ops.post_send, ibv_poll_cq(cq) cq->context->ops.poll_cq.
    MemorySegment qpCtx = qp.get(ADDRESS, CmLayout.QP_CONTEXT).reinterpret(VerbsLayout.SIZEOF_CONTEXT);
    postSendFn = qpCtx.get(ADDRESS, VerbsLayout.CONTEXT_OPS_POST_SEND);
    postRecvFn = qpCtx.get(ADDRESS, VerbsLayout.CONTEXT_OPS_POST_RECV);
    MemorySegment sendCtx = sendCq.get(ADDRESS, CmLayout.CQ_CONTEXT).reinterpret(VerbsLayout.SIZEOF_CONTEXT);
    sendPollFn = sendCtx.get(ADDRESS, VerbsLayout.CONTEXT_OPS_POLL_CQ);
    sendNotifyFn = sendCtx.get(ADDRESS, VerbsLayout.CONTEXT_OPS_REQ_NOTIFY_CQ);
    MemorySegment recvCtx = recvCq.get(ADDRESS, CmLayout.CQ_CONTEXT).reinterpret(VerbsLayout.SIZEOF_CONTEXT);
    recvPollFn = recvCtx.get(ADDRESS, VerbsLayout.CONTEXT_OPS_POLL_CQ);
    recvNotifyFn = recvCtx.get(ADDRESS, VerbsLayout.CONTEXT_OPS_REQ_NOTIFY_CQ);
    sendChannelFd = channelFd(sendChannel);
    recvChannelFd = channelFd(recvChannel);
  }

  private static int channelFd(MemorySegment channel) {
    if (channel.equals(MemorySegment.NULL)) {
      return -1;
    }
    int fd = channel.reinterpret(VerbsLayout.SIZEOF_COMP_CHANNEL).get(JAVA_INT, VerbsLayout.COMP_CHANNEL_FD);
    RdmaCm.setNonBlocking(fd);
    return fd;
  }

  private MemorySegment srqPostRecvFn() {
    MemorySegment ctx = srq.reinterpret(8).get(ADDRESS, CmLayout.SRQ_CONTEXT).reinterpret(VerbsLayout.SIZEOF_CONTEXT);
    return ctx.get(ADDRESS, VerbsLayout.CONTEXT_OPS_POST_SRQ_RECV);
  }

  @Override
  protected void release() {
    CmEventLoop l = loop;
    if (l != null) {
      l.forget(this);
    }
    try {
      Librdmacm.DESTROY_EP.invokeExact(id);
    } catch (Throwable t) {
      throw new RdmaException("rdma_destroy_ep failed", t);
    }
    RdmaCm.LIVE.decrementAndGet();
    arena.close();
  }

  @Override
  protected String closeFunction() {
    return "rdma_destroy_ep";
  }
}
