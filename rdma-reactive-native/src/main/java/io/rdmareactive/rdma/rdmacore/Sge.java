package io.rdmareactive.rdma.rdmacore;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.rdmareactive.rdma.verbs.ScatterGatherList;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;

/** Flyweight over a native {@code struct ibv_sge[]} (scatter/gather entries of one work request). */
final class Sge {
  static final long SIZE = VerbsLayout.SIZEOF_SGE;
  /** What this flyweight writes, keyed as the layout probe prints it (checked by LayoutCheckTest). */
  static final Map<String, Long> FIELDS = Map.of("sizeof.ibv_sge", SIZE, "ibv_sge.addr", VerbsLayout.SGE_ADDR,
      "ibv_sge.length", VerbsLayout.SGE_LENGTH, "ibv_sge.lkey", VerbsLayout.SGE_LKEY);

  private final MemorySegment array;
  private final int capacity;

  /** {@code capacity} entries (at least one) in {@code arena}. */
  Sge(Arena arena, int capacity) {
    this.capacity = Math.max(1, capacity);
    this.array = arena.allocate(SIZE * this.capacity, 8);
  }

  MemorySegment segment() {
    return array;
  }

  int capacity() {
    return capacity;
  }

  Sge set(int index, long address, int length, int localKey) {
    long base = index * SIZE;
    array.set(JAVA_LONG, base + VerbsLayout.SGE_ADDR, address);
    array.set(JAVA_INT, base + VerbsLayout.SGE_LENGTH, length);
    array.set(JAVA_INT, base + VerbsLayout.SGE_LKEY, localKey);
    return this;
  }

  /** Copies every entry of {@code sgl} (the caller checked it fits); returns how many. */
  int set(ScatterGatherList sgl) {
    int n = sgl.count();
    for (int i = 0; i < n; i++) {
      set(i, sgl.address(i), sgl.length(i), sgl.localKey(i));
    }
    return n;
  }
}
