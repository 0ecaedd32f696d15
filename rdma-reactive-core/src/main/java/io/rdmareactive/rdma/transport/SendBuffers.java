package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.verbs.MemoryRegion;
import java.lang.foreign.MemorySegment;
import org.jspecify.annotations.Nullable;

/**
 * A connection's send buffers: its own ({@link OwnBuffers}), or slots bound to buffers borrowed
 * per SEND from its loop's {@link SendPool} and given back at the send's completion, so that a
 * burst does not keep its peak. A slot's index is what the sender and its completions name either
 * way. The connection's drain calls it; {@link #returnBorrowed} runs once the QP is gone.
 */
final class SendBuffers {
  private final OwnBuffers own;
  /** Where send buffers are borrowed from (the loop's), else null: the connection registers its own. */
  private final @Nullable SendPool pool;
  /** Pooled: the pool's buffer bound to each slot, -1 while none is. */
  private final int @Nullable [] slab;
  /** Pooled: each bound slot's region, memory and place in it, read from the pool once, when bound (no lock per lookup). */
  private final MemoryRegion @Nullable [] slotRegion;
  private final MemorySegment @Nullable [] slotMemory;
  private final long @Nullable [] slotOffset;
  /** Pooled: runs the connection's drain once the pool, at its cap, gets a buffer back. */
  private final Runnable wake;
  private boolean returned;

  /** Sends from {@code own}, or, with {@code pool}, slots of it bound to the pool's buffers. */
  SendBuffers(OwnBuffers own, @Nullable SendPool pool, Runnable wake) {
    this.own = own;
    this.pool = pool;
    this.wake = wake;
    if (pool != null) {
      own.slotsOnly();
      slab = new int[own.count];
      java.util.Arrays.fill(slab, -1);
      slotRegion = new MemoryRegion[own.count];
      slotMemory = new MemorySegment[own.count];
      slotOffset = new long[own.count];
    } else {
      slab = null;
      slotRegion = null;
      slotMemory = null;
      slotOffset = null;
    }
  }

  /** Send buffers that can be taken now; pooled, when the pool is at its cap, the drain is woken by the next one back. */
  int available() {
    SendPool p = pool;
    if (p == null) {
      return own.available();
    }
    int slots = own.available();
    int n = Math.min(slots, p.available());
    if (n == 0 && slots > 0) {
      n = Math.min(slots, p.awaitIfEmpty(wake));
    }
    return n;
  }

  int take() {
    SendPool p = pool;
    if (p == null) {
      return own.take();
    }
    int slot = own.take();
    int index = p.take(slot, slotRegion, slotMemory, slotOffset);
    if (index < 0) {
      own.give(slot);
      throw new IllegalStateException("the loop's send pool is at its cap (LOOP_SEND_BUFFERS)");
    }
    slab[slot] = index;
    return slot;
  }

  void give(int index) {
    SendPool p = pool;
    if (p == null) {
      own.give(index);
      return;
    }
    int b = slab[index];
    slab[index] = -1;
    slotRegion[index] = null;
    slotMemory[index] = null;
    own.give(index);
    p.give(b);
  }

  MemoryRegion region(int index) {
    return pool != null ? slotRegion[index] : own.region(index);
  }

  MemorySegment memory(int index) {
    return pool != null ? slotMemory[index] : own.memory(index);
  }

  /** Where send buffer {@code index} starts in its chunk's memory and region. */
  long offset(int index) {
    return pool != null ? slotOffset[index] : own.offset(index);
  }

  /** Bytes this connection registered for sends alone (none when pooled). */
  long registeredBytes() {
    return own.registeredBytes();
  }

  void deregister() {
    own.deregister();
  }

  /** Pooled: the borrowed buffers go back (the QP that could read them is gone) and the pool is let go. Idempotent. */
  void returnBorrowed() {
    SendPool p = pool;
    if (p == null || returned) {
      return;
    }
    returned = true;
    for (int i = 0; i < slab.length; i++) {
      int b = slab[i];
      if (b >= 0) {
        slab[i] = -1;
        p.give(b);
      }
    }
    p.detach(wake);
  }
}
