package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.verbs.MemoryRegion;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;

/**
 * What a loop's receive pool and send pool share: their {@link BufferSlab}, read under the
 * pool's lock (the loop's drains and closes elsewhere both reach it), and how a buffer number
 * names its region, memory and place; and the periodic {@link BufferSlab#trim}, run on the loop's
 * timers while more than a base chunk is registered.
 */
abstract class LoopBufferPool {
  /**
   * How often a pool gives back the chunks that the peak in use over the last period did not
   * need: an idle pool keeps its last peak for one to two periods, then one base chunk.
   */
  static final Duration TRIM_PERIOD = Duration.ofMillis(500);

  /** Runs a task on the pool's loop after a delay (the loop's timers); disposed: refused (the loop ended). */
  @FunctionalInterface
  interface Timer {
    Disposable schedule(Runnable task, Duration delay);
  }

  /** The pool's buffers; guarded by this pool's lock. */
  protected final BufferSlab slab;
  private final Timer timer;
  /** The trim scheduled, or null; guarded by this pool's lock. */
  private @Nullable Disposable trim;

  LoopBufferPool(BufferSlab slab, Timer timer) {
    this.slab = slab;
    this.timer = timer;
  }

  /** Under the pool's lock, after buffers were taken: the periodic trim starts once the slab grew past a base chunk. */
  protected final void trimLater() {
    if (trim == null && slab.beyondBase()) {
      Disposable t = timer.schedule(this::trimTick, TRIM_PERIOD);
      trim = t.isDisposed() ? null : t; // refused: the next take asks again
    }
  }

  private synchronized void trimTick() {
    trim = null;
    if (slab.trim()) {
      trimLater();
    }
  }

  /** Under the pool's lock, as its slab closes or unpins: a trim due would find nothing, and would hold the loop's thread until then. */
  protected final void stopTrims() {
    Disposable t = trim;
    trim = null;
    if (t != null) {
      t.dispose();
    }
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
