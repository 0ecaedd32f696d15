package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The send buffers of one loop and device (issue 21): connections borrow a buffer per send and
 * give it back on the send's completion, so a burst on one connection no longer keeps its peak.
 * A {@link BufferSlab} registers chunks of 1 MiB and up, doubling to 8 MiB, up to a cap
 * ({@link RdmaOption#LOOP_SEND_BUFFERS}) and deregisters, each {@link #TRIM_PERIOD}, the empty chunks
 * that period's peak did not need. A connection that finds
 * the cap reached waits: it is woken by the next buffer given back (its own completions may never
 * come, if it has nothing in flight). Thread-safe: the loop's drains call it, and a close that
 * frees a connection's buffers may run elsewhere.
 */
final class SendPool extends LoopBufferPool {
  private final Runnable releasePd;
  private final ArrayDeque<Runnable> waiters = new ArrayDeque<>();
  private int users;
  private boolean closed;
  /**
   * {@link BufferSlab#available}, kept at each take and give: read with no lock by the drains,
   * several times per message, where the pool's monitor cost more than the message's copy. Written
   * with release order under the lock, not as a volatile (a full fence per take and give): a
   * reading is only a hint, checked again under the lock by {@link #take} and {@link #awaitIfEmpty}.
   */
  private final AtomicInteger available = new AtomicInteger();

  /**
   * A pool on {@code pd} of at most {@code maxBuffers} buffers of {@code bufferSize} bytes, trimmed
   * on {@code timer}; {@code releasePd} gives back its PD lease.
   */
  SendPool(ProtectionDomain pd, int bufferSize, int maxBuffers, Timer timer, Runnable releasePd) {
    super(slab(pd, bufferSize, maxBuffers), timer);
    this.releasePd = releasePd;
    available.setRelease(slab.available());
  }

  private static BufferSlab slab(ProtectionDomain pd, int bufferSize, int maxBuffers) {
    int chunk = chunkBuffers(bufferSize, maxBuffers);
    return new BufferSlab(pd, bufferSize, Math.max(chunk, maxBuffers / chunk * chunk), chunk, Access.local());
  }

  /** A connection starts borrowing; false when the pool is closed already (the caller makes a new one). */
  synchronized boolean attach() {
    if (closed) {
      return false;
    }
    users++;
    return true;
  }

  /** A connection is done borrowing (what it still has comes back with {@link #give}). */
  synchronized void detach(Runnable wake) {
    users--;
    waiters.remove(wake);
    closeIfDone();
  }

  /** Whether the pool closed (no connection borrows and every buffer came back). */
  synchronized boolean isClosed() {
    return closed;
  }

  /**
   * Buffers {@link #take} can hand out now: a reading with no lock, exact for the loop's thread
   * (the only one that takes, bar a stopped loop's callers) up to buffers given back meanwhile.
   */
  int available() {
    return available.getAcquire();
  }

  /**
   * Takes a buffer and writes its region, memory and place at {@code slot} of the three arrays,
   * all under one lock; -1 at the cap.
   */
  synchronized int take(int slot, MemoryRegion[] regions, MemorySegment[] memory, long[] offsets) {
    int index = slab.take();
    available.setRelease(slab.available());
    if (index >= 0) {
      regions[slot] = slab.region(index);
      memory[slot] = slab.memory(index);
      offsets[slot] = slab.offset(index);
    }
    trimLater();
    return index;
  }

  /**
   * Runs {@code wake} once when the next buffer comes back, unless one is available already;
   * returns how many are, read under the lock that a give takes, so no give is missed between.
   */
  synchronized int awaitIfEmpty(Runnable wake) {
    int n = slab.available();
    if (n == 0 && !waiters.contains(wake)) {
      waiters.add(wake);
    }
    return n;
  }

  /** Gives buffer {@code index} back, and wakes the connection that waited longest for one. */
  void give(int index) {
    Runnable w;
    synchronized (this) {
      slab.give(index);
      available.setRelease(slab.available());
      w = waiters.poll();
      closeIfDone();
    }
    if (w != null) {
      w.run();
    }
  }

  private void closeIfDone() {
    if (users == 0 && slab.inUse() == 0 && !closed) {
      closed = true;
      stopTrims();
      slab.close();
      releasePd.run();
    }
  }

  @Override
  public String toString() {
    return "SendPool[" + slab + "]";
  }
}
