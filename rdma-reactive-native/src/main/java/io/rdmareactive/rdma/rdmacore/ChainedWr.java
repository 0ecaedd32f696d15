package io.rdmareactive.rdma.rdmacore;

import java.lang.foreign.MemorySegment;

/** A work-request flyweight that can be chained into a list through its {@code next} pointer. */
interface ChainedWr {
  /** The struct. */
  MemorySegment segment();

  /** Chains {@code next} after this request (NULL ends the list). */
  ChainedWr next(MemorySegment next);
}
