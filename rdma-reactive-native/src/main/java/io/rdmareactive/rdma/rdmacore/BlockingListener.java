package io.rdmareactive.rdma.rdmacore;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.RdmaException;
import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The passive side of {@link BlockingEndpoint}: rdma_create_ep with RAI_PASSIVE (which keeps the
 * QP attributes for incoming requests) and rdma_listen. {@link #getRequest} hands out each request
 * as a {@link BlockingEndpoint} that already has its QP; accept or reject it, then close it.
 * Closing the listener does not affect endpoints already handed out. Waits block the calling thread.
 */
public final class BlockingListener extends AbstractRdmaResource {
  private static final int WAIT_SLICE_MILLIS = 50;

  private final MemorySegment id;
  private final int channelFd;
  private final int port;
  private final String address;

  private BlockingListener(MemorySegment id, String address) {
    super("listener on " + address, null);
    this.id = id.reinterpret(CmLayout.SIZEOF_CM_ID);
    this.address = address;
    try {
      channelFd = this.id.get(ADDRESS, CmLayout.CM_ID_CHANNEL).reinterpret(CmLayout.SIZEOF_EVENT_CHANNEL)
          .get(JAVA_INT, CmLayout.EVENT_CHANNEL_FD);
      // Non-blocking: rdma_get_request then reports EAGAIN and waits happen in Java, in slices.
      RdmaCm.setNonBlocking(channelFd);
      port = Short.toUnsignedInt(Short.reverseBytes((short) Librdmacm.GET_SRC_PORT.invokeExact(this.id)));
    } catch (Throwable t) {
      destroy();
      abandon();
      throw RdmaCm.rethrow(t);
    }
  }

  /**
   * Listens on {@code host}:{@code port} ({@code host} null: every address; {@code port} 0: any
   * free port, see {@link #port()}). Requests get an RC QP of {@code depth} work requests each
   * way, one scatter/gather entry each, {@code maxInlineData} inline bytes, every send signaled,
   * on the device's default PD.
   *
   * @throws io.rdmareactive.rdma.ConnectionException ADDRESS_IN_USE, UNRESOLVED, ...
   */
  public static BlockingListener listen(@Nullable String host, int port, int depth, int maxInlineData, int backlog) {
    return open(host, port, CmQueuePairOptions.of(depth).withMaxInlineData(maxInlineData), backlog);
  }

  /** As {@link #listen}, requests getting a QP made from {@code qp}. */
  static BlockingListener open(@Nullable String host, int port, CmQueuePairOptions qp, int backlog) {
    if (backlog < 0) {
      throw new IllegalArgumentException("backlog must be >= 0, was " + backlog);
    }
    try (CmAddressInfo address = CmAddressInfo.passive(host, port); Arena a = Arena.ofConfined()) {
      MemorySegment attr = qp.toNative(a, MemorySegment.NULL);
      MemorySegment out = a.allocate(ADDRESS);
      int rc = (int) Librdmacm.CREATE_EP.invokeExact(Native.callState(), out, address.segment(),
          MemorySegment.NULL, attr);
      if (rc != 0) {
        throw RdmaCm.connectFailure("rdma_create_ep", Native.lastErrno(), "binding " + address);
      }
      BlockingListener listener = new BlockingListener(out.get(ADDRESS, 0), (host == null ? "*" : host) + ":" + port);
      rc = (int) Librdmacm.LISTEN.invokeExact(Native.callState(), listener.id, backlog);
      if (rc != 0) {
        int errno = Native.lastErrno();
        listener.close();
        throw RdmaCm.connectFailure("rdma_listen", errno, "listening on " + address);
      }
      return listener;
    } catch (Throwable t) {
      throw RdmaCm.rethrow(t);
    }
  }

  /** The bound port (the chosen one when opened with port 0). */
  public int port() {
    return port;
  }

  /** The struct rdma_cm_id* of the listening id. */
  MemorySegment id() {
    return id;
  }

  /**
   * rdma_get_request: the next connection request, waiting at most {@code timeoutMillis}
   * (negative: no limit). The endpoint has its QP and the request's private data
   * ({@link BlockingEndpoint#peerPrivateData()}); accept or reject it.
   *
   * @return the request, or null on timeout
   */
  public @Nullable BlockingEndpoint getRequest(Duration timeout) {
    return getRequest(timeout.toMillis());
  }

  /** As {@link #getRequest(Duration)}, in milliseconds. */
  @Nullable BlockingEndpoint getRequest(long timeoutMillis) {
    long deadline = timeoutMillis < 0 ? Long.MAX_VALUE : System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    while (true) {
      synchronized (this) {
        ensureOpen();
        try (Arena a = Arena.ofConfined()) {
          MemorySegment out = a.allocate(ADDRESS);
          int rc = (int) Librdmacm.GET_REQUEST.invokeExact(Native.callState(), id, out);
          if (rc == 0) {
            CmEndpoint ep = new CmEndpoint(out.get(ADDRESS, 0), "endpoint accepted on " + address);
            ep.peerPrivateData(ep.eventPrivateData());
            return new BlockingEndpoint(ep);
          }
          int errno = Native.lastErrno();
          if (errno != NativeCallException.EAGAIN) {
            throw Native.failure("rdma_get_request", errno, "on " + this);
          }
        } catch (Throwable t) {
          throw RdmaCm.rethrow(t);
        }
      }
      long remaining = deadline - System.nanoTime();
      if (remaining <= 0) {
        return null;
      }
      RdmaCm.awaitReadable(channelFd, -1,
          (int) Math.min(WAIT_SLICE_MILLIS, Math.max(1, TimeUnit.NANOSECONDS.toMillis(remaining))));
    }
  }

  private void destroy() {
    try {
      Librdmacm.DESTROY_EP.invokeExact(id);
    } catch (Throwable t) {
      throw new RdmaException("rdma_destroy_ep failed", t);
    }
  }

  @Override
  protected void release() {
    destroy();
  }

  @Override
  protected String closeFunction() {
    return "rdma_destroy_ep";
  }
}
