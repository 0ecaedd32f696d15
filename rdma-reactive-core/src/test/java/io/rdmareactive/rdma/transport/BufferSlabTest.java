package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.RdmaContext;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The loops' slab of registered buffers: grows a chunk at a time, each twice the last, up to its cap, packs low, trims what a period did not need. */
class BufferSlabTest {
  private static final int SIZE = 1024;
  private static final int CHUNK = 4;
  private final RdmaContext context = new InMemoryProvider().open("mem0");
  private final ProtectionDomain pd = context.allocateProtectionDomain();

  @AfterEach
  void close() {
    pd.close(); // fails while a chunk is still registered
    context.close();
  }

  @Test
  void registersNothingUntilTakenThenAChunkAtATimeUpToItsCap() {
    try (BufferSlab slab = new BufferSlab(pd, SIZE, 3 * CHUNK, CHUNK, Access.local())) {
      assertThat(slab.registeredBytes()).isZero();
      assertThat(slab.available()).isEqualTo(12);
      for (int i = 0; i < 12; i++) {
        assertThat(slab.take()).as("lowest free place of the lowest chunk").isEqualTo(i);
        assertThat(slab.registeredBytes()).isEqualTo((long) (i / CHUNK + 1) * CHUNK * SIZE);
      }
      assertThat(slab.take()).as("at the cap").isEqualTo(-1);
      assertThat(slab.registrations()).isEqualTo(3);
      assertThat(slab.inUse()).isEqualTo(12);
      slab.give(5);
      assertThat(slab.take()).isEqualTo(5);
    }
  }

  @Test
  void eachBufferIsItsOwnBytesInItsChunk() {
    try (BufferSlab slab = new BufferSlab(pd, SIZE, 2 * CHUNK, CHUNK, Access.local())) {
      for (int i = 0; i < 2 * CHUNK; i++) {
        int b = slab.take();
        slab.memory(b).set(ValueLayout.JAVA_INT, slab.offset(b), b);
        slab.memory(b).set(ValueLayout.JAVA_INT, slab.offset(b) + SIZE - 4, -b);
      }
      for (int b = 0; b < 2 * CHUNK; b++) {
        assertThat(slab.memory(b).get(ValueLayout.JAVA_INT, slab.offset(b))).isEqualTo(b);
        assertThat(slab.memory(b).get(ValueLayout.JAVA_INT, slab.offset(b) + SIZE - 4)).isEqualTo(-b);
      }
      assertThat(slab.region(0)).isSameAs(slab.region(CHUNK - 1)).isNotSameAs(slab.region(CHUNK));
    }
  }

  @Test
  void aBurstIsGivenBackByTheTrimsAfterItNotAtOnce() {
    try (BufferSlab slab = new BufferSlab(pd, SIZE, 8 * CHUNK, CHUNK, Access.local())) { // chunks 4, 4, 8, 16
      List<Integer> taken = new ArrayList<>();
      for (int i = 0; i < 8 * CHUNK; i++) {
        taken.add(slab.take());
      }
      assertThat(slab.registeredBytes()).isEqualTo(8L * CHUNK * SIZE);
      for (int i = taken.size() - 1; i >= 1; i--) { // the burst ends: all but one buffer come back
        slab.give(taken.get(i));
      }
      assertThat(slab.registeredBytes()).as("given back, not yet trimmed").isEqualTo(8L * CHUNK * SIZE);
      assertThat(slab.trim()).as("more than a base chunk stays").isTrue();
      assertThat(slab.registeredBytes()).as("the first trim keeps its period's peak").isEqualTo(8L * CHUNK * SIZE);
      assertThat(slab.trim()).isFalse();
      assertThat(slab.registeredBytes()).as("the next keeps the chunk in use").isEqualTo((long) CHUNK * SIZE);
      slab.give(taken.getFirst());
      slab.trim();
      slab.trim();
      assertThat(slab.registeredBytes()).as("idle: one base chunk").isEqualTo((long) CHUNK * SIZE);
      int again = slab.take();
      assertThat(slab.region(again)).isNotNull();
      slab.give(again);
    }
  }

  @Test
  void aStreamWhoseBuffersAllComeBackBetweenBurstsRegistersNoChunkAgain() {
    try (BufferSlab slab = new BufferSlab(pd, SIZE, 8 * CHUNK, CHUNK, Access.local())) {
      for (int burst = 0; burst < 50; burst++) {
        List<Integer> taken = new ArrayList<>();
        for (int i = 0; i < 6 * CHUNK; i++) {
          taken.add(slab.take());
        }
        taken.forEach(slab::give); // every send completed: the slab is idle for an instant
        if (burst % 10 == 9) {
          slab.trim(); // a period passes now and then, the stream going on
        }
      }
      assertThat(slab.registrations()).as("the chunks of the first burst, never again").isEqualTo(4);
      slab.trim();
      slab.trim();
      assertThat(slab.registeredBytes()).as("the stream over, a period idle: one base chunk")
          .isEqualTo((long) CHUNK * SIZE);
    }
  }

  @Test
  void takingPacksIntoTheLowChunksSoTheHighOnesEmpty() {
    try (BufferSlab slab = new BufferSlab(pd, SIZE, 3 * CHUNK, CHUNK, Access.local())) {
      for (int i = 0; i < 3 * CHUNK; i++) {
        slab.take();
      }
      slab.give(1); // chunk 0
      slab.give(9); // chunk 2
      assertThat(slab.take()).as("the lowest chunk with a free buffer").isEqualTo(1);
      assertThat(slab.take()).isEqualTo(9);
    }
  }

  @Test
  void misuseFailsTypedAndLosesNothing() {
    BufferSlab slab = new BufferSlab(pd, SIZE, 2 * CHUNK, CHUNK, Access.local());
    int b = slab.take();
    assertThatThrownBy(() -> slab.give(CHUNK)).as("a buffer of an unregistered chunk")
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("was not taken");
    slab.give(b);
    assertThatThrownBy(() -> slab.give(b)).as("given back twice").isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> slab.memory(CHUNK)).isInstanceOf(IllegalStateException.class);
    assertThat(slab.take()).isEqualTo(b);
    int other = slab.take();
    slab.give(other);
    assertThatThrownBy(() -> slab.give(other)).as("given back twice while its chunk is in use")
        .isInstanceOf(IllegalStateException.class);
    assertThat(slab.take()).as("lent once, not twice").isEqualTo(other);
    assertThat(slab.take()).isNotEqualTo(other);
    slab.close();
    slab.close(); // idempotent
    assertThat(slab.registeredBytes()).isZero();
    assertThatThrownBy(slab::take).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    assertThatThrownBy(() -> new BufferSlab(pd, SIZE, 2, CHUNK, Access.local()))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void chunksDoubleUpToEightBaseChunksSoASlabNeedsFewRegions() {
    try (BufferSlab slab = new BufferSlab(pd, SIZE, 64 * CHUNK, CHUNK, Access.local())) {
      // base chunks: 1, 1, 2, 4, then 8 each: 8 + 7 x 8 = 64
      assertThat(slab.maxChunks()).isEqualTo(11);
      for (int i = 0; i < 64 * CHUNK; i++) {
        assertThat(slab.take()).isEqualTo(i);
      }
      assertThat(slab.take()).as("at the cap").isEqualTo(-1);
      assertThat(slab.registrations()).isEqualTo(11);
      assertThat(slab.registeredBytes()).isEqualTo(64L * CHUNK * SIZE);
      assertThat(slab.region(2 * CHUNK)).as("chunk 2: base chunks 2 and 3").isSameAs(slab.region(4 * CHUNK - 1))
          .isNotSameAs(slab.region(4 * CHUNK));
      assertThat(slab.region(8 * CHUNK)).as("chunk 4: the first of eight base chunks")
          .isSameAs(slab.region(16 * CHUNK - 1)).isNotSameAs(slab.region(16 * CHUNK));
      assertThat(slab.offset(16 * CHUNK + 3)).isEqualTo(3L * SIZE);
      assertThat(slab.offset(4 * CHUNK + 5)).isEqualTo(5L * SIZE);
    }
  }

  @Test
  void aCapBetweenChunksEndsWithAShorterChunk() {
    try (BufferSlab slab = new BufferSlab(pd, SIZE, 5 * CHUNK, CHUNK, Access.local())) {
      assertThat(slab.maxChunks()).as("1, 1, 2 and the last 1 of a 4").isEqualTo(4);
      for (int i = 0; i < 5 * CHUNK; i++) {
        slab.take();
      }
      assertThat(slab.take()).isEqualTo(-1);
      assertThat(slab.registeredBytes()).isEqualTo(5L * CHUNK * SIZE);
      assertThat(slab.capacity()).isEqualTo(5 * CHUNK);
    }
  }

  @Test
  void anEmptyTopChunkGoesBeforeTheLowOnesOnceThePeakLeavesRoom() {
    try (BufferSlab slab = new BufferSlab(pd, SIZE, 8 * CHUNK, CHUNK, Access.local())) { // chunks 4, 4, 8, 16
      for (int i = 0; i < 8 * CHUNK; i++) {
        slab.take();
      }
      for (int i = 16; i < 32; i++) {
        slab.give(i); // the top chunk empties
      }
      slab.trim();
      assertThat(slab.registeredBytes()).as("the period's peak needed it").isEqualTo(32L * SIZE);
      for (int i = 0; i < 4; i++) {
        slab.give(i); // chunk 0 empties too
      }
      slab.trim();
      assertThat(slab.registeredBytes()).as("the top one, the largest, goes; chunk 0 stays for the peak of 16")
          .isEqualTo(16L * SIZE);
      assertThat(slab.inUse()).isEqualTo(12);
      assertThat(slab.take()).as("chunk 0 is still registered").isEqualTo(3);
      for (int i = 4; i < 16; i++) {
        slab.give(i);
      }
      slab.give(3);
      assertThat(slab.inUse()).isZero();
      slab.trim();
      slab.trim();
      assertThat(slab.registeredBytes()).as("idle: one base chunk of slack").isEqualTo((long) CHUNK * SIZE);
    }
  }

  @Test
  void randomTakesAndGivesNeverLendABufferTwiceAndAnIdleSlabKeepsOneBaseChunk() {
    java.util.Random random = new java.util.Random(21);
    for (int cap : new int[] {CHUNK, 5 * CHUNK, 13 * CHUNK, 64 * CHUNK}) {
      try (BufferSlab slab = new BufferSlab(pd, SIZE, cap, CHUNK, Access.local())) {
        java.util.BitSet held = new java.util.BitSet();
        List<Integer> order = new ArrayList<>();
        for (int step = 0; step < 20_000; step++) {
          // phases of growth and shrinkage, so that chunks come and go
          boolean growing = (step / 2_000) % 2 == 0;
          if (order.isEmpty() || (random.nextInt(10) < (growing ? 7 : 3) && slab.available() > 0)) {
            int b = slab.take();
            assertThat(b).as("a free buffer under the cap").isBetween(0, cap - 1);
            assertThat(held.get(b)).as("buffer %d lent twice", b).isFalse();
            held.set(b);
            order.add(b);
            slab.memory(b).set(ValueLayout.JAVA_INT, slab.offset(b), b);
          } else {
            int b = order.remove(random.nextInt(order.size()));
            assertThat(slab.memory(b).get(ValueLayout.JAVA_INT, slab.offset(b))).as("buffer %d's own bytes", b)
                .isEqualTo(b);
            assertThat(slab.offset(b) + SIZE).isLessThanOrEqualTo(slab.memory(b).byteSize());
            held.clear(b);
            slab.give(b);
          }
          if (step % 500 == 499) {
            slab.trim();
          }
          assertThat(slab.inUse()).isEqualTo(held.cardinality());
          assertThat(slab.registeredBytes()).isGreaterThanOrEqualTo((long) held.cardinality() * SIZE);
        }
        order.forEach(slab::give);
        assertThat(slab.inUse()).isZero();
        slab.trim();
        slab.trim();
        assertThat(slab.registeredBytes()).as("idle, cap %d: at most one base chunk", cap)
            .isLessThanOrEqualTo((long) CHUNK * SIZE);
      }
    }
  }

  @Test
  void anIdleSlabKeepsOneBaseChunkWhateverTheOrderBuffersComeBackIn() {
    for (int taken : new int[] {9, 16}) { // chunks of 1, 1, 2, 4, 8 buffers
      for (boolean ascending : new boolean[] {true, false}) {
        try (BufferSlab slab = new BufferSlab(pd, SIZE, 16, 1, Access.local())) {
          for (int i = 0; i < taken; i++) {
            slab.take();
          }
          for (int i = 0; i < taken; i++) {
            slab.give(ascending ? i : taken - 1 - i);
          }
          slab.trim();
          slab.trim();
          assertThat(slab.registeredBytes()).as("%d taken, given back %s", taken, ascending ? "ascending" : "descending")
              .isLessThanOrEqualTo(SIZE);
          assertThat(slab.take()).as("and it lends again").isBetween(0, 15);
        }
      }
    }
  }
}
