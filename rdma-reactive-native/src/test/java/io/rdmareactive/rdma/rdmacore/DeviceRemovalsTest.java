package io.rdmareactive.rdma.rdmacore;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.rdmacore.DeviceRemovals.Outcome;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The watch after a DEVICE_REMOVAL, with a stand-in for rdma_get_devices: each way it ends, and
 * that one device has at most one watch at a time. Each test uses its own device name, as the set
 * of watched devices is process-wide.
 */
class DeviceRemovalsTest {
  private static final Duration PERIOD = Duration.ofMillis(5);
  private static final Duration GIVE_UP = Duration.ofSeconds(10);
  private static final Duration WAIT = Duration.ofSeconds(10);

  @Test
  void endsOnceTheDeviceIsNoLongerListed() {
    AtomicInteger calls = new AtomicInteger();
    Supplier<List<String>> lister = () -> calls.incrementAndGet() < 3 ? List.of("gone0", "rxe1") : List.of("rxe1");

    assertThat(watch("gone0", lister, GIVE_UP)).succeedsWithin(WAIT).isEqualTo(Outcome.DROPPED);
    assertThat(calls).hasValue(3);
  }

  @Test
  void endsWhenTheRemovedDeviceWasTheLastOne() {
    // librdmacm then stops updating its list: waiting longer would change nothing.
    AtomicInteger calls = new AtomicInteger();
    Supplier<List<String>> lister = () -> calls.incrementAndGet() < 2 ? List.of("last0") : List.of();

    assertThat(watch("last0", lister, GIVE_UP)).succeedsWithin(WAIT).isEqualTo(Outcome.LAST_DEVICE);
    assertThat(calls).hasValue(2);
  }

  @Test
  void givesUpWhenTheDeviceIsStillListedAtTheDeadline() {
    AtomicInteger calls = new AtomicInteger();
    Supplier<List<String>> lister = () -> {
      calls.incrementAndGet();
      return List.of("held0", "rxe1");
    };

    assertThat(watch("held0", lister, Duration.ofSeconds(1))).succeedsWithin(WAIT).isEqualTo(Outcome.GAVE_UP);
    assertThat(calls.get()).isGreaterThan(1);
  }

  @Test
  void endsWhenListingTheDevicesFails() {
    Supplier<List<String>> lister = () -> {
      throw new IllegalStateException("rdma_get_devices failed");
    };

    assertThat(watch("failing0", lister, GIVE_UP)).succeedsWithin(WAIT).isEqualTo(Outcome.LISTING_FAILED);
  }

  @Test
  void endsWhenItsThreadIsInterrupted() {
    AtomicInteger calls = new AtomicInteger();
    Supplier<List<String>> lister = () -> {
      calls.incrementAndGet();
      Thread.currentThread().interrupt(); // the sleep that follows throws
      return List.of("stopped0");
    };

    assertThat(watch("stopped0", lister, GIVE_UP)).succeedsWithin(WAIT).isEqualTo(Outcome.INTERRUPTED);
    assertThat(calls).hasValue(1);
  }

  @Test
  void aDeviceHasOneWatchAtATimeAndCanBeWatchedAgainAfterwards() throws InterruptedException {
    CountDownLatch listing = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Set<Thread> threads = ConcurrentHashMap.newKeySet();
    Supplier<List<String>> lister = () -> {
      threads.add(Thread.currentThread());
      listing.countDown();
      try {
        release.await();
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
      return List.of("rxe1");
    };

    CompletableFuture<Outcome> first = watch("twice0", lister, GIVE_UP);
    assertThat(listing.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    assertThat(DeviceRemovals.removalSeen("twice0", lister, PERIOD, GIVE_UP)).isNull();
    release.countDown();
    assertThat(first).succeedsWithin(WAIT).isEqualTo(Outcome.DROPPED);
    assertThat(threads).singleElement().extracting(Thread::getName).isEqualTo("rdma-removal-twice0");

    assertThat(watch("twice0", lister, GIVE_UP)).succeedsWithin(WAIT).isEqualTo(Outcome.DROPPED);
    assertThat(threads).hasSize(2);
  }

  private static CompletableFuture<Outcome> watch(String device, Supplier<List<String>> lister, Duration giveUp) {
    CompletableFuture<Outcome> outcome = DeviceRemovals.removalSeen(device, lister, PERIOD, giveUp);
    assertThat(outcome).as("a watch of %s is started", device).isNotNull();
    return outcome;
  }
}
