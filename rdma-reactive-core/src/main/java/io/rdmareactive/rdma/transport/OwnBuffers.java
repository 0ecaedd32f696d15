package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.jspecify.annotations.Nullable;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * One direction of a connection's own registered buffers (see {@link RegisteredBuffers}): a free
 * list over chunks registered on demand, or, behind a loop's shared receive queue, slots without
 * memory. Plain state driven from the connection's drain; {@link #registeredBytes} is read from any thread.
 */
final class OwnBuffers {
  private static final Logger log = Loggers.getLogger(OwnBuffers.class);

  private final ProtectionDomain pd;
  private final Arena arena;
  private final int bufferSize;
  private final int perChunk;
  /** log2 of {@link #perChunk} where that is a power of two (the usual case), else -1: lookups then shift, not divide. */
  private final int chunkShift;
  final int count;
  private final int[] free;
  private int freeCount;
  private final @Nullable MemoryRegion[] regions;
  private final MemorySegment[] memory;
  private int registered;
  private volatile long registeredBytes;

  /** {@code count} buffers of {@code bufferSize} bytes in {@code arena}, registered on {@code pd} {@code perChunk} at a time. */
  OwnBuffers(ProtectionDomain pd, Arena arena, int bufferSize, int count, int perChunk) {
    this.pd = pd;
    this.arena = arena;
    this.bufferSize = bufferSize;
    this.count = count;
    this.perChunk = perChunk;
    this.chunkShift = Integer.bitCount(perChunk) == 1 ? Integer.numberOfTrailingZeros(perChunk) : -1;
    int chunks = (count + perChunk - 1) / perChunk;
    free = new int[count];
    regions = new MemoryRegion[chunks];
    memory = new MemorySegment[chunks];
  }

  /** Bytes registered so far. */
  long registeredBytes() {
    return registeredBytes;
  }

  /** Where buffer {@code index} starts in its chunk's {@link #memory} and {@link #region}. */
  long offset(int index) {
    return (long) (chunkShift >= 0 ? index & (perChunk - 1) : index % perChunk) * bufferSize;
  }

  int available() {
    return freeCount + count - registered;
  }

  /** Slots without memory (a shared receive queue's): every index free, nothing to register. */
  void slotsOnly() {
    for (int i = count - 1; i >= 0; i--) {
      free[freeCount++] = i;
    }
    registered = count;
  }

  int take() {
    if (freeCount == 0) {
      grow();
    }
    return free[--freeCount];
  }

  void give(int index) {
    free[freeCount++] = index;
  }

  MemoryRegion region(int index) {
    return regions[chunkOf(index)];
  }

  MemorySegment memory(int index) {
    return memory[chunkOf(index)];
  }

  /** Buffer {@code index}'s chunk: a shift where it can be, since a division per lookup is dear under emulation (TCG). */
  private int chunkOf(int index) {
    return chunkShift >= 0 ? index >>> chunkShift : index / perChunk;
  }

  /** Registers the next chunk; its buffers go on the free list, lowest index on top. */
  void grow() {
    if (registered == count) {
      throw new IllegalStateException("all " + count + " buffers are in use");
    }
    int chunk = registered / perChunk;
    int n = Math.min(perChunk, count - registered);
    MemorySegment m = arena.allocate((long) n * bufferSize, 4096);
    regions[chunk] = pd.registerMemory(m, Access.local());
    memory[chunk] = m;
    for (int i = registered + n - 1; i >= registered; i--) {
      free[freeCount++] = i;
    }
    registered += n;
    registeredBytes += (long) n * bufferSize;
  }

  void deregister() {
    for (int i = 0; i < regions.length; i++) {
      MemoryRegion r = regions[i];
      regions[i] = null;
      if (r != null) {
        try {
          r.close();
        } catch (RuntimeException e) {
          log.debug("rdma-reactive: deregistering " + r + " failed", e);
        }
      }
    }
  }
}
