package io.rdmareactive.rdma.rdmacore;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * Frees the protection domain librdmacm keeps per device when a device list, not an id, drops the
 * device's last reference.
 *
 * <p>librdmacm allocates that PD with the first rdma_cm_id bound to the device and frees it in
 * ucma_put_device, when the device's reference count reaches zero. rdma_get_devices takes a
 * reference too, but rdma_free_devices drops it without freeing the PD. So a device list that
 * outlives the process's last id (the loops' shared PD borrows one until the last pooled buffer is
 * back, which can be after the last connection's id is gone) strands the PD until some later id is
 * bound and destroyed: {@code rdma resource show} lists it, with no user, meanwhile. After each
 * borrowed list is freed, {@link #release} binds an id to the device and destroys it: that frees
 * the PD where nothing else holds the device, and changes nothing where something does.
 */
final class StrandedDevicePd {
  private static final Logger log = Loggers.getLogger(StrandedDevicePd.class);
  private static final short AF_INET = 2;
  private static final short AF_INET6 = 10;
  /** Per device, a local address (a sockaddr, port 0) an id of this process was bound to. */
  private static final Map<String, byte[]> ADDRESSES = new ConcurrentHashMap<>();

  private StrandedDevicePd() {}

  /** Before an id is destroyed: remembers its device's local address, when it is bound to one. */
  static void remember(MemorySegment id) {
    MemorySegment verbs = id.get(ADDRESS, CmLayout.CM_ID_VERBS);
    if (verbs.address() == 0) {
      return; // never bound to a device: it holds no reference
    }
    short family = id.get(JAVA_SHORT, CmLayout.CM_ID_SRC_ADDR);
    int length = family == AF_INET ? 16 : family == AF_INET6 ? 28 : 0;
    if (length == 0) {
      return;
    }
    byte[] address = id.asSlice(CmLayout.CM_ID_SRC_ADDR, length).toArray(JAVA_BYTE);
    address[2] = 0; // sin_port / sin6_port: any
    address[3] = 0;
    ADDRESSES.put(NativeContext.deviceNameOf(verbs), address);
  }

  /** After a device list of {@code device} was freed: an id bound there and destroyed (see above). */
  static void release(String device) {
    byte[] address = ADDRESSES.get(device);
    if (address == null) {
      return; // no id of this process was bound there: librdmacm allocated no PD for it
    }
    try (Arena a = Arena.ofConfined()) {
      MemorySegment out = a.allocate(ADDRESS);
      // No event channel: a synchronous id, whose bind completes in the call.
      int rc = (int) Librdmacm.CREATE_ID.invokeExact(Native.callState(), MemorySegment.NULL, out, MemorySegment.NULL,
          (int) CmLayout.RDMA_PS_TCP);
      if (rc != 0) {
        log.debug("rdma-reactive: rdma_create_id failed ({}); librdmacm's PD of {} may stay until the next id",
            Native.strerror(Native.lastErrno()), device);
        return;
      }
      MemorySegment id = out.get(ADDRESS, 0);
      try {
        rc = (int) Librdmacm.BIND_ADDR.invokeExact(Native.callState(), id, a.allocateFrom(JAVA_BYTE, address));
        if (rc != 0) { // the address went with the device, say: then so did the PD
          log.debug("rdma-reactive: rdma_bind_addr on {} failed ({})", device, Native.strerror(Native.lastErrno()));
        }
      } finally {
        Librdmacm.DESTROY_EP.invokeExact(id);
      }
    } catch (Throwable t) {
      log.debug("rdma-reactive: releasing librdmacm's PD of " + device + " failed", t);
    }
  }
}
