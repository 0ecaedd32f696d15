package io.rdmareactive.rdma.nativ;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.MemorySegment;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * Lets librdmacm let go of a removed device. librdmacm opens one ibv_context per device and keeps
 * it open; it finds a device gone only when a later call lists the devices (rdma_get_devices), and
 * then closes its context as soon as no id and no device list holds it. Until then the kernel's
 * removal (rdma link delete, a driver unload) waits for this process. RDMA_CM_EVENT_DEVICE_REMOVAL
 * comes while the device is still listed (the kernel removes the CM from the device before
 * uverbs, and the CM waits for the ids), so after one a daemon thread lists the devices every
 * {@value #PERIOD_MILLIS} ms until the device has left the list, or {@value #GIVE_UP_SECONDS} s
 * have passed.
 */
final class DeviceRemovals {
  private static final Logger log = Loggers.getLogger(DeviceRemovals.class);
  static final long PERIOD_MILLIS = 100;
  static final long GIVE_UP_SECONDS = 120;
  private static final Set<String> WATCHED = ConcurrentHashMap.newKeySet();

  private DeviceRemovals() {
  }

  /**
   * On the CM thread, for a DEVICE_REMOVAL event not yet acknowledged (so its id is alive):
   * watches the id's device until librdmacm has dropped it.
   */
  static void removalSeen(MemorySegment cmId) {
    MemorySegment verbs = cmId.reinterpret(CmLayout.SIZEOF_CM_ID).get(ADDRESS, CmLayout.CM_ID_VERBS);
    if (verbs.address() == 0) {
      return;
    }
    String device = NativeContext.deviceNameOf(verbs);
    if (!WATCHED.add(device)) {
      return;
    }
    Thread.ofPlatform().daemon().name("rdma-removal-" + device).start(() -> watch(device));
  }

  private static void watch(String device) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(GIVE_UP_SECONDS);
    try {
      while (System.nanoTime() < deadline) {
        if (!RdmaCm.deviceNames().contains(device)) {
          log.debug("rdma-reactive: librdmacm dropped the removed device {}", device);
          return;
        }
        Thread.sleep(PERIOD_MILLIS);
      }
      log.warn("rdma-reactive: librdmacm still lists the removed device " + device + " after " + GIVE_UP_SECONDS
          + " s; something still holds it");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      log.warn("rdma-reactive: listing the devices after " + device + " was removed failed", e);
    } finally {
      WATCHED.remove(device);
    }
  }
}
