package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import org.jspecify.annotations.Nullable;

/**
 * A connection's registered memory: fixed-size receive and send buffers with their free lists.
 *
 * <p>The buffers are allocated and registered lazily, a chunk of about {@link #CHUNK_BYTES} at a
 * time, when the free list runs dry and the configured count allows more. An idle framed
 * connection posts only the credit reserve, so it pins one receive chunk and no send memory
 * instead of {@code 2 × BUFFER_COUNT × BUFFER_SIZE}; a busy one grows to its configured count and
 * keeps it (registration is the expensive part, and a connection that was busy once tends to be
 * again). Each chunk is its own memory region: a buffer's index names its chunk and its place.
 *
 * <p>A receive buffer holding a message is reference counted: each view over it (the message,
 * a copy in progress, a zero-copy reader such as the RSocket module's ByteBuf) holds a count, and
 * the buffer goes back to the drain only when the count reaches zero. Closing the connection
 * deregisters the memory (unpins it) at once but frees it only when the last view is released:
 * a kept view reads its original bytes for as long as it is held, through every path, raw
 * addresses included (keeping costs nothing; copying out at close would copy every held byte and
 * still leave raw addresses already handed out dangling).
 *
 * <p>On a loop's shared receive queue the receive buffers are the loop's {@link ReceivePool}'s: the
 * connection has a slot per buffer it may hold, reserved as it promises grants and bound to the
 * pool's buffer a SEND landed in ({@link #adopt}); views name slots, and buffers go back to the pool.
 *
 * <p>The free lists belong to the connection's drain; any thread may call {@link #retain},
 * {@link #unref} and {@link #markReleased}, which allocate nothing and never block.
 */
final class RegisteredBuffers {
  /** About how much memory one registration pins: large enough that a busy connection needs few regions. */
  static final int CHUNK_BYTES = 64 * 1024;
  /** Fewest buffers per chunk: the credit reserve plus one, so an idle connection needs one chunk. */
  static final int MIN_CHUNK_BUFFERS = Protocol.RESERVE + 2;

  final int bufferSize;
  private final ProtectionDomain pd;
  private final Arena arena;
  private final OwnBuffers receives;
  private final SendBuffers sends;
  /** Released receive buffers, a bit per index, until the drain takes them back. */
  private final AtomicLongArray releasedBits;
  /** Views' counts per receive buffer: 0 while the buffer is free or posted. */
  private final AtomicIntegerArray refs;
  /** Receive buffers with a count above zero; the memory is freed at close once none is left. */
  private final AtomicInteger live = new AtomicInteger();
  private volatile boolean closing;
  private final AtomicBoolean freed = new AtomicBoolean();
  /** On a shared receive queue: this connection's share of the loop's pool, else null. */
  private final ReceivePool.@Nullable Member member;
  private final @Nullable ReceivePool pool;
  /** Shared: the pool's buffer bound to each slot, its memory and place (read when bound: a view's reads take no pool lock). */
  private final int @Nullable [] slabIndex;
  private final MemorySegment @Nullable [] slotMemory;
  private final long @Nullable [] slotOffset;
  /** Shared: free slots reserved for grants promised and not yet used. */
  private int promisedSlots;

  /** Sets up the pools and registers the first receive chunk; on failure frees what it made before throwing. */
  static RegisteredBuffers register(ProtectionDomain pd, int receiveCount, int sendCount, int bufferSize) {
    return open(pd, receiveCount, sendCount, bufferSize, null, null, () -> { });
  }

  /**
   * A connection's buffers: receives from {@code receivePool} (null: its own, the reserve's chunk
   * registered now) and sends borrowed from {@code sendPool} (null: its own); {@code wake} runs
   * its drain once a send pool at its cap gets a buffer back. On failure frees what it made.
   *
   * @throws io.rdmareactive.rdma.ConnectionException when the receive pool cannot back one more connection
   */
  static RegisteredBuffers open(ProtectionDomain pd, int receiveCount, int sendCount, int bufferSize,
      @Nullable ReceivePool receivePool, @Nullable SendPool sendPool, Runnable wake) {
    RegisteredBuffers b;
    try {
      b = new RegisteredBuffers(pd, receiveCount, sendCount, bufferSize, receivePool, sendPool, wake);
    } catch (RuntimeException e) {
      if (sendPool != null) {
        sendPool.detach(wake);
      }
      throw e;
    }
    if (receivePool != null) {
      return b;
    }
    try {
      b.receives.grow(); // the reserve is posted before the connection is established
      return b;
    } catch (RuntimeException e) {
      b.deregister();
      b.free();
      throw e;
    }
  }

  private RegisteredBuffers(ProtectionDomain pd, int receiveCount, int sendCount, int bufferSize,
      @Nullable ReceivePool pool, @Nullable SendPool sendPool, Runnable wake) {
    this.pool = pool;
    this.slabIndex = pool == null ? null : new int[receiveCount];
    this.slotMemory = pool == null ? null : new MemorySegment[receiveCount];
    this.slotOffset = pool == null ? null : new long[receiveCount];
    this.pd = pd;
    this.bufferSize = bufferSize;
    this.arena = Arena.ofShared();
    int perChunk = Math.max(MIN_CHUNK_BUFFERS, CHUNK_BYTES / bufferSize);
    receives = new OwnBuffers(pd, arena, bufferSize, receiveCount, perChunk);
    sends = new SendBuffers(new OwnBuffers(pd, arena, bufferSize, sendCount, perChunk), sendPool, wake);
    releasedBits = new AtomicLongArray((receiveCount + 63) >>> 6);
    refs = new AtomicIntegerArray(receiveCount);
    if (pool != null) {
      receives.slotsOnly();
      this.member = pool.join();
    } else {
      this.member = null;
    }
  }

  /** Whether the receive buffers are a loop's shared receive queue's. */
  boolean isShared() {
    return member != null;
  }

  /**
   * Shared: promises up to {@code wanted} grants, as free slots and the pool allow; how many.
   * Each keeps a slot for the SEND that will use it.
   */
  int promise(int wanted) {
    ReceivePool.Member m = java.util.Objects.requireNonNull(member);
    int n = m.promise(Math.min(wanted, receives.available() - promisedSlots));
    promisedSlots += n;
    return n;
  }

  /**
   * Shared: a SEND landed in the pool's buffer {@code index}; returns the slot it is bound to now,
   * or -1 when it was beyond the grants promised (the buffer went back to the pool).
   */
  int adopt(int index) {
    ReceivePool.Member m = java.util.Objects.requireNonNull(member);
    MemorySegment memory = m.arrived(index);
    if (memory == null || promisedSlots == 0) {
      m.give(index);
      return -1;
    }
    promisedSlots--;
    int slot = receives.take();
    slabIndex[slot] = index;
    slotMemory[slot] = memory;
    slotOffset[slot] = pool.offset(index);
    return slot;
  }

  /** Shared: the grants promised and not used go back to the pool (the peer can send no more). */
  void unpromise() {
    if (member != null) {
      member.unpromise(promisedSlots);
      promisedSlots = 0;
    }
  }

  /**
   * Bytes of memory registered (pinned) for this connection alone now; on a shared receive queue
   * its receive buffers are the loop's ({@link RdmaLoopResources#registeredReceiveBytes}).
   */
  long registeredBytes() {
    return receives.registeredBytes() + sends.registeredBytes();
  }

  /** Receive buffers that can be taken: free ones plus those not registered yet. */
  int freeReceives() {
    return receives.available() - promisedSlots;
  }

  /** Takes a free receive buffer, registering a new chunk first when none is free. */
  int takeReceive() {
    return receives.take();
  }

  /** A receive buffer goes back: to the free list, or on a shared queue to the pool, its slot to the free list. */
  void freeReceive(int index) {
    ReceivePool.Member m = member;
    if (m != null) {
      m.give(slabIndex[index]);
    }
    receives.give(index);
  }

  /** Send buffers that can be taken now (see {@link SendBuffers#available}). */
  int freeSends() {
    return sends.available();
  }

  int takeSend() {
    return sends.take();
  }

  void freeSend(int index) {
    sends.give(index);
  }

  MemoryRegion receiveRegion(int index) {
    return pool != null ? pool.region(slabIndex[index]) : receives.region(index);
  }

  MemoryRegion sendRegion(int index) {
    return sends.region(index);
  }

  /** The memory of the chunk holding receive buffer {@code index}; see {@link #offset}. */
  MemorySegment receiveMemory(int index) {
    return pool != null ? slotMemory[index] : receives.memory(index);
  }

  MemorySegment sendMemory(int index) {
    return sends.memory(index);
  }

  /** Where send buffer {@code index} starts in its chunk's memory and region. */
  long sendOffset(int index) {
    return sends.offset(index);
  }

  /** Where receive buffer {@code index} starts in its {@link #receiveMemory} and {@link #receiveRegion}. */
  long receiveOffset(int index) {
    return pool != null ? slotOffset[index] : receives.offset(index);
  }

  /**
   * Drain: a message landed in receive buffer {@code index}; its view holds a count. A batch's
   * views are all made before any is handed out, so no release can see the count reach zero
   * between them.
   */
  void viewCreated(int index) {
    if (refs.getAndIncrement(index) == 0) {
      live.incrementAndGet();
    }
  }

  /** Any thread: one more count on receive buffer {@code index}; false when none was left (released). */
  boolean retain(int index) {
    for (;;) {
      int v = refs.get(index);
      if (v <= 0) {
        return false;
      }
      if (refs.compareAndSet(index, v, v + 1)) {
        return true;
      }
    }
  }

  /**
   * Any thread: drops a count on receive buffer {@code index}; at zero the buffer goes back to
   * the drain (true), or, once the connection closed and it was the last, the memory is freed.
   */
  boolean unref(int index) {
    int v = refs.decrementAndGet(index);
    if (v > 0) {
      return false;
    }
    if (v < 0) {
      refs.incrementAndGet(index);
      throw new IllegalStateException("receive buffer " + index + " released more often than retained");
    }
    markReleased(index);
    if (closing && member != null) {
      takeBackReleased(index); // the drain no longer reclaims: the pool gets it now
    }
    if (live.decrementAndGet() == 0 && closing) {
      freeOnce();
    }
    return true;
  }

  /** Shared, closed: gives buffer {@code index} back to the pool if its released bit is still set (exactly once). */
  private void takeBackReleased(int index) {
    int w = index >>> 6;
    long bit = 1L << (index & 63);
    for (;;) {
      long v = releasedBits.get(w);
      if ((v & bit) == 0) {
        return; // another thread took it
      }
      if (releasedBits.compareAndSet(w, v, v & ~bit)) {
        java.util.Objects.requireNonNull(member).give(slabIndex[index]);
        return;
      }
    }
  }

  /**
   * Drain: drops the count of a view it never delivered; true when that was the buffer's last
   * count and the buffer is taken back (other views of its batch may still hold it).
   */
  boolean dropUndelivered(int index) {
    if (refs.decrementAndGet(index) > 0) {
      return false;
    }
    if (live.decrementAndGet() == 0 && closing) {
      freeOnce();
    }
    freeReceive(index);
    return true;
  }

  /** Any thread: the application is done with receive buffer {@code index}; the drain takes it back. */
  void markReleased(int index) {
    int w = index >>> 6;
    long bit = 1L << (index & 63);
    for (;;) { // a CAS loop: getAndAccumulate would allocate a lambda capturing bit
      long v = releasedBits.get(w);
      if (releasedBits.compareAndSet(w, v, v | bit)) {
        return;
      }
    }
  }

  /** Returns the released receive buffers to the free list; how many there were. */
  int reclaimReleased() {
    int n = 0;
    for (int w = 0; w < releasedBits.length(); w++) {
      if (releasedBits.get(w) == 0) {
        continue;
      }
      long bits = releasedBits.getAndSet(w, 0);
      while (bits != 0) {
        int index = (w << 6) + Long.numberOfTrailingZeros(bits);
        bits &= bits - 1;
        n++;
        freeReceive(index);
      }
    }
    return n;
  }

  /** Forgets released buffers (the connection is closed); on a shared queue they go back to the pool. */
  void discardReleased() {
    for (int w = 0; w < releasedBits.length(); w++) {
      if (member == null) {
        releasedBits.set(w, 0);
        continue;
      }
      long bits = releasedBits.get(w);
      while (bits != 0) {
        takeBackReleased((w << 6) + Long.numberOfTrailingZeros(bits));
        bits &= bits - 1;
      }
    }
  }

  /** Deregisters every chunk; the memory stays readable until {@link #free}. */
  void deregister() {
    receives.deregister();
    sends.deregister();
  }

  /** Frees the memory itself, now: only where no view can exist (a connection that never opened, tests). */
  void free() {
    sends.returnBorrowed();
    ReceivePool.Member m = member;
    if (m != null) {
      unpromise();
      m.leave();
    }
    freeOnce();
  }

  /** The connection closed: frees the memory now, or when the last view still held is released. */
  void freeWhenUnused() {
    closing = true;
    sends.returnBorrowed();
    ReceivePool.Member m = member;
    if (m != null) {
      unpromise();
      m.leave();
      discardReleased(); // released before closing was seen: nobody else gives those back
    }
    if (live.get() == 0) {
      freeOnce();
    }
  }

  /** Whether the memory is freed: none of its views is held any more, and the connection closed. */
  boolean isFreed() {
    return freed.get();
  }

  private void freeOnce() {
    if (freed.compareAndSet(false, true)) {
      arena.close();
    }
  }
}
