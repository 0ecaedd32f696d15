package io.rdmareactive.rsocket;

import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * One registered slab and its blocks, for {@link RegisteredByteBufAllocator}: power-of-two size
 * classes from 64 bytes, carved from the slab's end and reused from a free list per class, no
 * more than the slab holds. The slab is freed (deregistered, then its memory) once it is
 * {@link #close closed} and its last block is given back, so no buffer ever reads freed memory.
 * Any thread; the state is guarded by this object.
 */
final class RegisteredSlab {
  private static final int SMALLEST_CLASS = 6; // 64 bytes

  private final Arena arena;
  private final MemorySegment memory;
  private final MemoryRegion region;
  /** Free block offsets per size class, each a stack. */
  private final int[][] free = new int[32][];
  private final int[] freeCount = new int[32];
  /** Where blocks never used start. */
  private long top;
  private long usedBytes;
  private int blocksOut;
  private boolean closed;
  private boolean freed;

  RegisteredSlab(ProtectionDomain pd, long capacity) {
    if (capacity < 64 || capacity > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("a registered slab holds 64 bytes to 2 GiB - 1, not " + capacity);
    }
    Arena a = Arena.ofShared();
    try {
      memory = a.allocate(capacity, 4096);
      region = pd.registerMemory(memory, Access.local());
    } catch (RuntimeException | Error e) {
      a.close();
      throw e;
    }
    arena = a;
  }

  MemoryRegion region() {
    return region;
  }

  long capacity() {
    return memory.byteSize();
  }

  /** Where {@code length} bytes at native {@code address} lie in the slab, or -1 when not wholly inside it. */
  long offsetOf(long address, long length) {
    long at = address - memory.address();
    return at >= 0 && at + length <= memory.byteSize() ? at : -1;
  }

  /** The size class of a block holding {@code size} bytes. */
  static int sizeClass(int size) {
    return Math.max(SMALLEST_CLASS, 32 - Integer.numberOfLeadingZeros(Math.max(1, size - 1)));
  }

  /**
   * A block of size class {@code sizeClass} as a buffer, its offset being
   * {@code offsetOf(address)}; null when the slab has none left (or is closed).
   */
  synchronized ByteBuffer take(int sizeClass) {
    if (closed || sizeClass > 30) {
      return null;
    }
    long size = 1L << sizeClass;
    long at;
    if (freeCount[sizeClass] > 0) {
      at = free[sizeClass][--freeCount[sizeClass]];
    } else if (top + size <= memory.byteSize()) {
      at = top;
      top += size;
    } else {
      return null;
    }
    usedBytes += size;
    blocksOut++;
    return memory.asSlice(at, size).asByteBuffer();
  }

  /** Gives back the block of class {@code sizeClass} at {@code at}; frees the slab after its last block once closed. */
  void giveBack(long at, int sizeClass) {
    synchronized (this) {
      usedBytes -= 1L << sizeClass;
      blocksOut--;
      if (blocksOut == 0) { // all free: start over from the bottom, which undoes any fragmentation
        top = 0;
        java.util.Arrays.fill(freeCount, 0);
      } else {
        int[] stack = free[sizeClass];
        if (stack == null || stack.length == freeCount[sizeClass]) {
          stack = free[sizeClass] = java.util.Arrays.copyOf(stack == null ? new int[0] : stack,
              Math.max(8, freeCount[sizeClass] * 2));
        }
        stack[freeCount[sizeClass]++] = (int) at;
      }
      if (!closed || blocksOut > 0) {
        return;
      }
    }
    free();
  }

  synchronized long usedBytes() {
    return usedBytes;
  }

  /** No block is handed out from now on; the slab is freed now, or when the last block comes back. */
  void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      if (blocksOut > 0) {
        return;
      }
    }
    free();
  }

  synchronized boolean isFreed() {
    return freed;
  }

  private void free() {
    synchronized (this) {
      if (freed) {
        return;
      }
      freed = true;
    }
    try {
      region.close(); // no send holds it: a frame gives its blocks back after its sends retired
    } finally {
      arena.close();
    }
  }
}
