package io.rdmareactive.rdma.rdmacore;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.rdmareactive.rdma.ConnectionException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.jspecify.annotations.Nullable;

/**
 * A resolved RDMA address (struct rdma_addrinfo from rdma_getaddrinfo), RC over the TCP port
 * space. Freed by {@link #close()} (rdma_freeaddrinfo), which is idempotent.
 */
final class CmAddressInfo implements AutoCloseable {
  private final String description;
  private @Nullable MemorySegment info;

  private CmAddressInfo(MemorySegment info, String description) {
    this.info = info;
    this.description = description;
  }

  /** The address to connect to ({@code host}, {@code port}). */
  static CmAddressInfo active(String host, int port) {
    return resolve(host, port, false);
  }

  /** The address to listen on; {@code host} null means every local address. */
  static CmAddressInfo passive(@Nullable String host, int port) {
    return resolve(host, port, true);
  }

  /**
   * rdma_getaddrinfo with hints RAI_PASSIVE (when {@code passive}), RDMA_PS_TCP and RC.
   *
   * @throws ConnectionException UNRESOLVED when the name does not resolve
   */
  static CmAddressInfo resolve(@Nullable String host, int port, boolean passive) {
    if (port < 0 || port > 0xFFFF) {
      throw new IllegalArgumentException("port must be 0..65535, was " + port);
    }
    if (!passive && (host == null || host.isBlank())) {
      throw new IllegalArgumentException("an active (connecting) address needs a host");
    }
    String what = (host == null ? "*" : host) + ":" + port;
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment hints = arena.allocate(CmLayout.SIZEOF_ADDRINFO, 8);
      hints.set(JAVA_INT, CmLayout.ADDRINFO_FLAGS, passive ? (int) CmLayout.RAI_PASSIVE : 0);
      hints.set(JAVA_INT, CmLayout.ADDRINFO_QP_TYPE, (int) CmLayout.IBV_QPT_RC);
      hints.set(JAVA_INT, CmLayout.ADDRINFO_PORT_SPACE, (int) CmLayout.RDMA_PS_TCP);
      MemorySegment node = host == null ? MemorySegment.NULL : arena.allocateFrom(host);
      MemorySegment service = arena.allocateFrom(Integer.toString(port));
      MemorySegment out = arena.allocate(ADDRESS);
      int rc = (int) Librdmacm.GETADDRINFO.invokeExact(Native.callState(), node, service, hints, out);
      if (rc != 0) {
        int errno = Native.lastErrno();
        // rdma-core reports getaddrinfo's own (negative EAI_*) codes through errno or the return value.
        int gai = rc != -1 ? rc : errno < 0 ? errno : 0;
        if (gai != 0) {
          throw new ConnectionException(ConnectionException.Reason.UNRESOLVED,
              "rdma_getaddrinfo(" + what + ") failed: " + RdmaCm.gaiError(gai), null);
        }
        throw Native.failure("rdma_getaddrinfo", errno, what);
      }
      MemorySegment res = out.get(ADDRESS, 0).reinterpret(CmLayout.SIZEOF_ADDRINFO);
      return new CmAddressInfo(res, (passive ? "passive " : "") + "rdma_addrinfo " + what);
    } catch (Throwable t) {
      throw RdmaCm.rethrow(t);
    }
  }

  /** The struct rdma_addrinfo*; fails when closed. */
  synchronized MemorySegment segment() {
    MemorySegment s = info;
    if (s == null) {
      throw new io.rdmareactive.rdma.ResourceClosedException(description);
    }
    return s;
  }

  /** ai_dst_addr (a struct sockaddr*), NULL for a passive address. */
  MemorySegment destinationAddress() {
    return segment().get(ADDRESS, CmLayout.ADDRINFO_DST_ADDR);
  }

  /** ai_src_addr (a struct sockaddr*), possibly NULL. */
  MemorySegment sourceAddress() {
    return segment().get(ADDRESS, CmLayout.ADDRINFO_SRC_ADDR);
  }

  boolean isPassive() {
    return (segment().get(JAVA_INT, CmLayout.ADDRINFO_FLAGS) & (int) CmLayout.RAI_PASSIVE) != 0;
  }

  @Override
  public synchronized void close() {
    MemorySegment s = info;
    if (s != null) {
      info = null;
      try {
        Librdmacm.FREEADDRINFO.invokeExact(s);
      } catch (Throwable t) {
        throw RdmaCm.rethrow(t);
      }
    }
  }

  @Override
  public String toString() {
    return description + (info == null ? " (closed)" : "");
  }
}
