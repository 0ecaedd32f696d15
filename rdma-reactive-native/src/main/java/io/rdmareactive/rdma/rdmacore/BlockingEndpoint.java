package io.rdmareactive.rdma.rdmacore;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * librdmacm's blocking endpoint, as rdma_verbs.h offers it: rdma_create_ep (or a request from a
 * listener) gives an RC queue pair with a send and a receive CQ and their completion channels;
 * {@link #connect} or {@link #accept}, then {@link #postReceive} / {@link #postSend} and {@link
 * #receiveCompletion} / {@link #sendCompletion}. Every call blocks the calling thread, so this is
 * for plain threads, never for Reactor's non-blocking ones; the transport uses the asynchronous
 * CM path instead.
 *
 * <p>Native calls run under the CM id's lock, so {@link #close()} from another thread never frees
 * memory a call is using; completion waits happen outside it, in slices, and notice a close.
 * Closing fails with {@link io.rdmareactive.rdma.ResourceBusyException} while memory registered
 * here is still open. Posting allocates nothing.
 */
public final class BlockingEndpoint implements AutoCloseable {
  /** Longest single wait, so a wait notices {@link #close()} from another thread soon. */
  private static final int WAIT_SLICE_MILLIS = 50;

  private final CmEndpoint cm;
  private final Arena arena = Arena.ofShared();
  private final SendWr sendWr;
  private final RecvWr recvWr;
  private final MemorySegment badWr;
  private final MemorySegment cqEventOut;
  private final MemorySegment qp;
  private final MemorySegment srq;
  private final MemorySegment postSendFn;
  private final MemorySegment postRecvFn;
  private final CompletionSide sends;
  private final CompletionSide receives;
  private boolean released;

  /** A CQ of the endpoint with its channel and the ops-table entries of its context. */
  private record CompletionSide(MemorySegment cq, MemorySegment channel, int fd, MemorySegment pollFn,
      MemorySegment notifyFn, MemorySegment wc, String function) {
    static CompletionSide of(MemorySegment id, long cqOffset, long channelOffset, Arena arena, String function) {
      MemorySegment cq = id.get(ADDRESS, cqOffset).reinterpret(VerbsLayout.SIZEOF_CQ);
      MemorySegment channel = id.get(ADDRESS, channelOffset);
      // As verbs.h: ibv_poll_cq(cq) is cq->context->ops.poll_cq.
      MemorySegment ctx = cq.get(ADDRESS, CmLayout.CQ_CONTEXT).reinterpret(VerbsLayout.SIZEOF_CONTEXT);
      int fd = -1;
      if (!channel.equals(MemorySegment.NULL)) {
        fd = channel.reinterpret(VerbsLayout.SIZEOF_COMP_CHANNEL).get(JAVA_INT, VerbsLayout.COMP_CHANNEL_FD);
        Libc.setNonBlocking(fd); // ibv_get_cq_event then reports EAGAIN and waits happen here, in slices
      }
      return new CompletionSide(cq, channel, fd, ctx.get(ADDRESS, VerbsLayout.CONTEXT_OPS_POLL_CQ),
          ctx.get(ADDRESS, VerbsLayout.CONTEXT_OPS_REQ_NOTIFY_CQ), arena.allocate(VerbsLayout.SIZEOF_WC, 8), function);
    }
  }

  /** Takes over {@code cm}, whose id has its queue pair (rdma_create_ep or rdma_get_request). */
  BlockingEndpoint(CmEndpoint cm) {
    this.cm = cm;
    MemorySegment id = cm.id();
    try {
      sendWr = new SendWr(arena, 1);
      recvWr = new RecvWr(arena, 1);
      badWr = arena.allocate(ADDRESS);
      cqEventOut = arena.allocate(ADDRESS.byteSize() * 2, 8);
      qp = id.get(ADDRESS, CmLayout.CM_ID_QP).reinterpret(VerbsLayout.SIZEOF_QP);
      if (qp.equals(MemorySegment.NULL)) {
        throw new IllegalStateException(cm + " has no queue pair");
      }
      srq = id.get(ADDRESS, CmLayout.CM_ID_SRQ);
      MemorySegment qpCtx = qp.get(ADDRESS, CmLayout.QP_CONTEXT).reinterpret(VerbsLayout.SIZEOF_CONTEXT);
      postSendFn = qpCtx.get(ADDRESS, VerbsLayout.CONTEXT_OPS_POST_SEND);
      postRecvFn = srq.equals(MemorySegment.NULL) ? qpCtx.get(ADDRESS, VerbsLayout.CONTEXT_OPS_POST_RECV)
          : srq.reinterpret(8).get(ADDRESS, CmLayout.SRQ_CONTEXT).reinterpret(VerbsLayout.SIZEOF_CONTEXT)
              .get(ADDRESS, VerbsLayout.CONTEXT_OPS_POST_SRQ_RECV);
      sends = CompletionSide.of(id, CmLayout.CM_ID_SEND_CQ, CmLayout.CM_ID_SEND_CQ_CHANNEL, arena, "rdma_get_send_comp");
      receives = CompletionSide.of(id, CmLayout.CM_ID_RECV_CQ, CmLayout.CM_ID_RECV_CQ_CHANNEL, arena,
          "rdma_get_recv_comp");
    } catch (RuntimeException | Error e) {
      arena.close();
      cm.close();
      throw e;
    }
  }

  /**
   * The active side: resolves {@code host}:{@code port} and its route (blocking, up to
   * librdmacm's 2 s each) and creates an RC queue pair of {@code depth} work requests each way,
   * one scatter/gather entry each, {@code maxInlineData} inline bytes, every send signaled.
   *
   * @throws io.rdmareactive.rdma.ConnectionException UNREACHABLE, ...
   */
  public static BlockingEndpoint create(String host, int port, int depth, int maxInlineData) {
    try (CmAddressInfo address = CmAddressInfo.active(host, port)) {
      return create(address, CmQueuePairOptions.of(depth).withMaxInlineData(maxInlineData));
    }
  }

  /** rdma_create_ep on {@code address} (not a passive one) with the device's default PD. */
  static BlockingEndpoint create(CmAddressInfo address, CmQueuePairOptions qp) {
    return new BlockingEndpoint(CmEndpoint.create(address, qp));
  }

  /**
   * rdma_connect, blocking until the peer accepts (or rejects).
   *
   * @return the private data of the peer's accept (InfiniBand/RoCE pad it with zeros)
   * @throws io.rdmareactive.rdma.ConnectionException REFUSED, UNREACHABLE, TIMED_OUT, ...
   */
  public byte[] connect(byte[] privateData) {
    return cm.connect(privateData);
  }

  /** rdma_accept of the request this endpoint came from, blocking until ESTABLISHED. */
  public void accept(byte[] privateData) {
    cm.accept(privateData);
  }

  /** rdma_reject of the request this endpoint came from; close it afterwards. */
  public void reject(byte[] privateData) {
    cm.reject(privateData);
  }

  /** rdma_disconnect: outstanding work completes flushed, the peer gets DISCONNECTED. */
  public void disconnect() {
    cm.disconnect();
  }

  /** The peer's private data: of its connect request (accepted side) or of its accept (active side). */
  public byte[] peerPrivateData() {
    return cm.peerPrivateData();
  }

  /** The local queue pair number of this endpoint (for logs and checks against the peer). */
  public int queuePairNumber() {
    return cm.queuePairNumber();
  }

  /** The CM id (connection management, for tests and the listener). */
  CmEndpoint id() {
    return cm;
  }

  /** rdma_reg_msgs: local write, for send and receive buffers. */
  public MemoryRegion registerMessages(MemorySegment segment) {
    return register(segment, Set.of(Access.LOCAL_WRITE), "rdma_reg_msgs");
  }

  /** rdma_reg_read: local write and remote read. */
  public MemoryRegion registerRead(MemorySegment segment) {
    return register(segment, Set.of(Access.LOCAL_WRITE, Access.REMOTE_READ), "rdma_reg_read");
  }

  /** rdma_reg_write: local write and remote write. */
  public MemoryRegion registerWrite(MemorySegment segment) {
    return register(segment, Set.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE), "rdma_reg_write");
  }

  private MemoryRegion register(MemorySegment segment, Set<Access> access, String function) {
    synchronized (cm) {
      cm.ensureOpen();
      return CmMemoryRegion.register(cm, cm.id().get(ADDRESS, CmLayout.CM_ID_PD), segment, access, function);
    }
  }

  /**
   * rdma_post_recv: one receive of {@code length} bytes at {@code offset} of {@code mr} (registered
   * here); {@code context} comes back as the completion's wr_id.
   */
  public void postReceive(long context, MemoryRegion mr, long offset, int length) {
    CmMemoryRegion r = checkBounds(mr, offset, length, "rdma_post_recv");
    synchronized (cm) {
      cm.ensureOpen();
      r.ensureOpen();
      recvWr.sges().set(0, r.address() + offset, length, r.lkey());
      recvWr.wrId(context).numSge(1);
      // rdma_post_recvv: ibv_post_srq_recv(id->srq) when the id has an SRQ, else ibv_post_recv(id->qp).
      int rc = InlineVerbs.post(postRecvFn, srq.equals(MemorySegment.NULL) ? qp : srq, recvWr.segment(), badWr);
      if (rc != 0) {
        throw Native.failure("rdma_post_recv", Math.abs(rc));
      }
    }
  }

  /**
   * rdma_post_send: one SEND of {@code length} bytes at {@code offset} of {@code mr} with
   * {@code flags} (ibv_send_flags: {@link io.rdmareactive.rdma.verbs.SendRequest#SIGNALED}, ...).
   */
  public void postSend(long context, MemoryRegion mr, long offset, int length, int flags) {
    CmMemoryRegion r = checkBounds(mr, offset, length, "rdma_post_send");
    synchronized (cm) {
      r.ensureOpen();
      send(context, r.address() + offset, length, r.lkey(), flags);
    }
  }

  /**
   * rdma_post_send with IBV_SEND_INLINE and no memory region: {@code data} (a native segment of at
   * most the QP's max inline data) is copied into the work request before this returns.
   */
  public void postSendInline(long context, MemorySegment data, int flags) {
    CmQueuePairOptions caps = cm.capabilities();
    if (caps != null && data.byteSize() > caps.maxInlineData()) {
      throw new IllegalArgumentException("inline send of " + data.byteSize() + " bytes exceeds the QP's "
          + "max inline data of " + caps.maxInlineData());
    }
    if (!data.isNative()) {
      throw new IllegalArgumentException("inline data must be a native segment");
    }
    synchronized (cm) {
      send(context, data.address(), (int) data.byteSize(), 0, flags | (int) CmLayout.IBV_SEND_INLINE);
    }
  }

  private void send(long context, long address, int length, int lkey, int flags) {
    cm.ensureOpen();
    sendWr.sges().set(0, address, length, lkey);
    sendWr.wrId(context).numSge(1).opcode((int) CmLayout.IBV_WR_SEND).sendFlags(flags);
    // Plain threads, not the hot path: an ordinary downcall on every provider (see InlineVerbs).
    int rc = InlineVerbs.postSend(postSendFn, qp, sendWr.segment(), badWr, true);
    if (rc != 0) {
      throw Native.failure("rdma_post_send", Math.abs(rc));
    }
  }

  private static CmMemoryRegion checkBounds(MemoryRegion mr, long offset, int length, String function) {
    if (!(mr instanceof CmMemoryRegion r)) {
      throw new IllegalArgumentException(function + ": " + mr + " was not registered on a BlockingEndpoint");
    }
    // rdma_post_recv asserts this in C; here it is a clear error instead of an abort.
    if (offset < 0 || length < 0 || offset + length > r.length()) {
      throw new IllegalArgumentException(function + ": [" + offset + ", " + offset + "+" + length
          + ") is outside the memory region of " + r.length() + " bytes");
    }
    return r;
  }

  /**
   * rdma_get_send_comp: the next send completion, waiting at most {@code timeout} (negative: no
   * limit) as rdma_verbs.h does (poll, arm, poll, wait on the channel, ack).
   *
   * @return the completion (check its status), or null on timeout
   */
  public @Nullable WorkCompletion sendCompletion(Duration timeout) {
    return completion(sends, timeout.toMillis());
  }

  /** rdma_get_recv_comp: as {@link #sendCompletion}, for the receive CQ. */
  public @Nullable WorkCompletion receiveCompletion(Duration timeout) {
    return completion(receives, timeout.toMillis());
  }

  private @Nullable WorkCompletion completion(CompletionSide s, long timeoutMillis) {
    long deadline = timeoutMillis < 0 ? Long.MAX_VALUE : System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    while (true) {
      synchronized (cm) {
        cm.ensureOpen();
        int n = InlineVerbs.pollCq(s.pollFn(), s.cq(), 1, s.wc());
        if (n == 0 && !s.channel().equals(MemorySegment.NULL)) {
          int rc = InlineVerbs.reqNotifyCq(s.notifyFn(), s.cq(), 0, true);
          if (rc != 0) {
            throw Native.failure(s.function(), Math.abs(rc), "ibv_req_notify_cq");
          }
          n = InlineVerbs.pollCq(s.pollFn(), s.cq(), 1, s.wc());
          if (n == 0) {
            // The channel fd is non-blocking: EAGAIN means no event yet, wait outside the lock.
            if (Ibverbs.getCqEvent(s.channel(), cqEventOut, cqEventOut.asSlice(ADDRESS.byteSize())) == 0) {
              Ibverbs.ackCqEvents(cqEventOut.get(ADDRESS, 0), 1);
              continue;
            }
            int errno = Native.lastErrno();
            if (errno != NativeCallException.EAGAIN) {
              throw Native.failure(s.function(), errno, "ibv_get_cq_event");
            }
          }
        }
        if (n < 0) {
          throw Native.failure(s.function(), n == -1 ? NativeCallException.EIO : -n, "ibv_poll_cq");
        }
        if (n > 0) {
          return toWorkCompletion(s.wc());
        }
      }
      long remaining = deadline - System.nanoTime();
      if (remaining <= 0) {
        return null;
      }
      int slice = (int) Math.min(WAIT_SLICE_MILLIS, Math.max(1, TimeUnit.NANOSECONDS.toMillis(remaining)));
      if (s.fd() >= 0) {
        RdmaCm.awaitReadable(s.fd(), -1, slice);
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

  /**
   * rdma_destroy_ep: the id, its QP, CQs and channels.
   *
   * @throws io.rdmareactive.rdma.ResourceBusyException while memory registered here is open
   */
  @Override
  public void close() {
    synchronized (cm) {
      cm.close();
      if (!released) {
        released = true;
        arena.close();
      }
    }
  }

  @Override
  public String toString() {
    return "BlockingEndpoint[" + cm + "]";
  }
}
