package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.verbs.MemoryRegion;
import java.lang.foreign.MemorySegment;

/**
 * What a loop's receive pool and send pool share: their {@link BufferSlab}, read under the
 * pool's lock (the loop's drains and closes elsewhere both reach it), and how a buffer number
 * names its region, memory and place.
 */
abstract class LoopBufferPool {
  /** The pool's buffers; guarded by this pool's lock. */
  protected final BufferSlab slab;

  LoopBufferPool(BufferSlab slab) {
    this.slab = slab;
  }

  /** Buffers per chunk for a cap of {@code maxBuffers} of {@code bufferSize} bytes: about 1 MiB, at least 16 chunks. */
  static int chunkBuffers(int bufferSize, int maxBuffers) {
    return Math.max(1, Math.min(ReceivePool.CHUNK_BYTES / bufferSize, maxBuffers / 16));
  }

  /** The region of buffer {@code index}'s chunk. */
  final synchronized MemoryRegion region(int index) {
    return slab.region(index);
  }

  /** The memory of buffer {@code index}'s chunk; the buffer starts at {@link #offset}. */
  final synchronized MemorySegment memory(int index) {
    return slab.memory(index);
  }

  /** Where buffer {@code index} starts in its chunk. */
  final long offset(int index) {
    return slab.offset(index);
  }

  /** Bytes the pool registers now. */
  final synchronized long registeredBytes() {
    return slab.registeredBytes();
  }
}
