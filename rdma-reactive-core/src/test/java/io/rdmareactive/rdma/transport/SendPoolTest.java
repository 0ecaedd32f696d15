package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.RdmaContext;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A loop's send pool as the drains use it: the lock-free count of what a take can hand out, a take
 * that binds the buffer's region, memory and place to a slot under its one lock, and a drain that
 * finds the pool at its cap woken once by the next buffer given back, with no give lost between its
 * reading and its registration.
 */
class SendPoolTest {
  private static final int SIZE = 1024;
  private static final int CAP = 256; // chunks of 16 buffers
  private final RdmaContext context = new InMemoryProvider().open("mem0");
  private final ProtectionDomain pd = context.allocateProtectionDomain();
  private final AtomicInteger pdReleases = new AtomicInteger();
  private final MemoryRegion[] regions = new MemoryRegion[CAP];
  private final MemorySegment[] memory = new MemorySegment[CAP];
  private final long[] offsets = new long[CAP];

  @AfterEach
  void close() {
    pd.close(); // fails while a chunk is still registered
    context.close();
  }

  private SendPool pool() {
    SendPool p = new SendPool(pd, SIZE, CAP, (task, delay) -> reactor.core.Disposables.disposed(), pdReleases::incrementAndGet);
    assertThat(p.attach()).isTrue();
    return p;
  }

  @Test
  void aTakeBindsTheBuffersRegionMemoryAndPlaceToItsSlotAndTheCountFollowsTakesAndGives() {
    SendPool pool = pool();
    assertThat(pool.available()).isEqualTo(CAP);
    int a = pool.take(3, regions, memory, offsets);
    int b = pool.take(5, regions, memory, offsets);
    assertThat(pool.available()).isEqualTo(CAP - 2);
    assertThat(regions[3]).isSameAs(pool.region(a));
    assertThat(memory[3]).isSameAs(pool.memory(a));
    assertThat(offsets[3]).isEqualTo(pool.offset(a));
    assertThat(offsets[5]).as("another buffer, another place").isEqualTo(pool.offset(b)).isNotEqualTo(offsets[3]);
    assertThat(memory[5].byteSize()).as("the chunk, the buffer inside it").isGreaterThanOrEqualTo(offsets[5] + SIZE);
    pool.give(a);
    pool.give(b);
    assertThat(pool.available()).isEqualTo(CAP);
    pool.detach(() -> { });
    assertThat(pool.isClosed()).as("no user and every buffer back").isTrue();
    assertThat(pdReleases).hasValue(1);
  }

  @Test
  void aDrainAtTheCapIsWokenOnceByTheNextGiveAndNotRegisteredWhileOneIsAvailable() {
    SendPool pool = pool();
    int[] taken = new int[CAP];
    for (int i = 0; i < CAP; i++) {
      taken[i] = pool.take(i, regions, memory, offsets);
    }
    assertThat(pool.available()).isZero();
    assertThat(pool.take(0, regions, memory, offsets)).as("at the cap").isEqualTo(-1);
    AtomicInteger wakes = new AtomicInteger();
    Runnable wake = wakes::incrementAndGet;
    assertThat(pool.awaitIfEmpty(wake)).isZero();
    assertThat(pool.awaitIfEmpty(wake)).as("registered once however often it asks").isZero();
    pool.give(taken[0]);
    assertThat(wakes).hasValue(1);
    pool.give(taken[1]);
    assertThat(wakes).as("woken once: it asks again when it needs to").hasValue(1);
    assertThat(pool.awaitIfEmpty(wake)).as("buffers are back: it takes them rather than wait").isEqualTo(2);
    pool.give(taken[2]);
    assertThat(wakes).as("not registered by a call that found buffers").hasValue(1);
    for (int i = 3; i < CAP; i++) {
      pool.give(taken[i]);
    }
    pool.detach(wake);
    assertThat(pool.isClosed()).isTrue();
  }
}
