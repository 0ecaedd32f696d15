package io.rdmareactive.rdma.rdmacore;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
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
 * have passed. librdmacm updates its list only while some device is left, so when the removed
 * device was the last one its context stays open until the process ends.
 */
final class DeviceRemovals {
  private static final Logger log = Loggers.getLogger(DeviceRemovals.class);
  static final long PERIOD_MILLIS = 100;
  static final long GIVE_UP_SECONDS = 120;
  private static final Set<String> WATCHED = ConcurrentHashMap.newKeySet();

  /** How a watch ended; production only logs it, tests wait for it. */
  enum Outcome { DROPPED, LAST_DEVICE, GAVE_UP, LISTING_FAILED, INTERRUPTED }

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
    removalSeen(device, RdmaCm::deviceNames, Duration.ofMillis(PERIOD_MILLIS), Duration.ofSeconds(GIVE_UP_SECONDS));
  }

  /**
   * Watches {@code device} on a daemon thread, {@code rdma-removal-<device>}, listing the devices
   * with {@code lister} every {@code period} until it is no longer listed or {@code giveUp} has
   * passed. Apart from {@link #removalSeen(MemorySegment)} so that the watch can be tested without
   * a device.
   *
   * @return the watch's outcome, completed once the device can be watched again; null when a
   *     watch of {@code device} is already under way (no thread is started)
   */
  static @Nullable CompletableFuture<Outcome> removalSeen(String device, Supplier<List<String>> lister,
      Duration period, Duration giveUp) {
    if (!WATCHED.add(device)) {
      return null;
    }
    CompletableFuture<Outcome> outcome = new CompletableFuture<>();
    Thread.ofPlatform().daemon().name("rdma-removal-" + device)
        .start(() -> outcome.complete(watch(device, lister, period, giveUp)));
    return outcome;
  }

  private static Outcome watch(String device, Supplier<List<String>> lister, Duration period, Duration giveUp) {
    long deadline = System.nanoTime() + giveUp.toNanos();
    try {
      while (System.nanoTime() < deadline) {
        List<String> listed = lister.get();
        if (listed.isEmpty()) {
          // rdma-core's librdmacm (v44 at least) updates its list only while some device is left.
          log.warn("rdma-reactive: " + device + " was the last RDMA device: librdmacm keeps its context of it "
              + "open until this process ends, and the kernel's removal of the device waits for that");
          return Outcome.LAST_DEVICE;
        }
        if (!listed.contains(device)) {
          log.debug("rdma-reactive: librdmacm dropped the removed device {}", device);
          return Outcome.DROPPED;
        }
        Thread.sleep(period);
      }
      log.warn("rdma-reactive: librdmacm still lists the removed device " + device + " after " + giveUp.toSeconds()
          + " s; something still holds it");
      return Outcome.GAVE_UP;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Outcome.INTERRUPTED;
    } catch (RuntimeException e) {
      log.warn("rdma-reactive: listing the devices after " + device + " was removed failed", e);
      return Outcome.LISTING_FAILED;
    } finally {
      WATCHED.remove(device); // before the outcome completes: whoever waits on it may watch again at once
    }
  }
}
