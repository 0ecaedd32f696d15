package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import org.jspecify.annotations.Nullable;
import reactor.util.Logger;
import reactor.util.Loggers;

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
 * <p>The free lists belong to the connection's drain; {@link #retain}, {@link #unref} and
 * {@link #markReleased} are the methods any thread may call, and they allocate nothing and never
 * block.
 */
final class RegisteredBuffers {
  private static final Logger log = Loggers.getLogger(RegisteredBuffers.class);
  /** About how much memory one registration pins: large enough that a busy connection needs few regions. */
  static final int CHUNK_BYTES = 64 * 1024;
  /** Fewest buffers per chunk: the credit reserve plus one, so an idle connection needs one chunk. */
  static final int MIN_CHUNK_BUFFERS = Protocol.RESERVE + 2;

  final int bufferSize;
  private final ProtectionDomain pd;
  private final Arena arena;
  private final Pool receives;
  private final Pool sends;
  /** Released receive buffers, a bit per index, until the drain takes them back. */
  private final AtomicLongArray releasedBits;
  /** Views' counts per receive buffer: 0 while the buffer is free or posted. */
  private final AtomicIntegerArray refs;
  /** Receive buffers with a count above zero; the memory is freed at close once none is left. */
  private final AtomicInteger live = new AtomicInteger();
  private volatile boolean closing;
  private final AtomicBoolean freed = new AtomicBoolean();
  private volatile long registeredBytes;

  /** Sets up the pools and registers the first receive chunk; on failure frees what it made before throwing. */
  static RegisteredBuffers register(ProtectionDomain pd, int receiveCount, int sendCount, int bufferSize) {
    RegisteredBuffers b = new RegisteredBuffers(pd, receiveCount, sendCount, bufferSize);
    try {
      b.receives.grow(); // the reserve is posted before the connection is established
      return b;
    } catch (RuntimeException e) {
      b.deregister();
      b.free();
      throw e;
    }
  }

  private RegisteredBuffers(ProtectionDomain pd, int receiveCount, int sendCount, int bufferSize) {
    this.pd = pd;
    this.bufferSize = bufferSize;
    this.arena = Arena.ofShared();
    int perChunk = Math.max(MIN_CHUNK_BUFFERS, CHUNK_BYTES / bufferSize);
    receives = new Pool(receiveCount, perChunk);
    sends = new Pool(sendCount, perChunk);
    releasedBits = new AtomicLongArray((receiveCount + 63) >>> 6);
    refs = new AtomicIntegerArray(receiveCount);
  }

  /** Bytes of memory registered (pinned) for this connection now. */
  long registeredBytes() {
    return registeredBytes;
  }

  /** Receive buffers that can be taken: free ones plus those not registered yet. */
  int freeReceives() {
    return receives.available();
  }

  /** Takes a free receive buffer, registering a new chunk first when none is free. */
  int takeReceive() {
    return receives.take();
  }

  void freeReceive(int index) {
    receives.give(index);
  }

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
    return receives.region(index);
  }

  MemoryRegion sendRegion(int index) {
    return sends.region(index);
  }

  /** The memory of the chunk holding receive buffer {@code index}; see {@link #offset}. */
  MemorySegment receiveMemory(int index) {
    return receives.memory(index);
  }

  MemorySegment sendMemory(int index) {
    return sends.memory(index);
  }

  /** Where buffer {@code index} starts in its chunk's memory and region. */
  long offset(int index) {
    return (long) (index % receives.perChunk) * bufferSize;
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
    if (live.decrementAndGet() == 0 && closing) {
      freeOnce();
    }
    return true;
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
    receives.give(index);
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
        receives.give(index);
      }
    }
    return n;
  }

  /** Forgets released buffers (the connection is closed). */
  void discardReleased() {
    for (int w = 0; w < releasedBits.length(); w++) {
      releasedBits.set(w, 0);
    }
  }

  /** Deregisters every chunk; the memory stays readable until {@link #free}. */
  void deregister() {
    receives.deregister();
    sends.deregister();
  }

  /** Frees the memory itself, now: only where no view can exist (a connection that never opened, tests). */
  void free() {
    freeOnce();
  }

  /** The connection closed: frees the memory now, or when the last view still held is released. */
  void freeWhenUnused() {
    closing = true;
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

  /** One direction's buffers: a free list over chunks registered on demand. */
  private final class Pool {
    final int perChunk;
    private final int count;
    private final int[] free;
    private int freeCount;
    private final @Nullable MemoryRegion[] regions;
    private final MemorySegment[] memory;
    private int registered;

    Pool(int count, int perChunk) {
      this.count = count;
      this.perChunk = perChunk;
      int chunks = (count + perChunk - 1) / perChunk;
      free = new int[count];
      regions = new MemoryRegion[chunks];
      memory = new MemorySegment[chunks];
    }

    int available() {
      return freeCount + count - registered;
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
      return regions[index / perChunk];
    }

    MemorySegment memory(int index) {
      return memory[index / perChunk];
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
}
