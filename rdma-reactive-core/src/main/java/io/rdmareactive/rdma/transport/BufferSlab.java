package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * Registered buffers that many connections borrow and return: the building block of a loop's
 * receive slab (behind a shared receive queue) and send pool (issue 21; see the design notes).
 * Fixed-size buffers live in chunks, each its own memory region on the loop's PD, registered when
 * no free buffer is left and the cap allows one more, and deregistered (unpinned and freed) by the
 * owner's periodic {@link #trim}, once all its buffers are free and the peak in use since the
 * last trim did not need it: a burst borrows and gives back rather than keeping its peak, and a
 * stream whose sends all complete between two bursts (the pool idle for an instant) does not
 * register and deregister a chunk at every turn. Registering costs a chunk's allocation, zeroing
 * and pinning: under Soft-RoCE in the VM, trimming at every idle instant spent 5-9% of a
 * streaming loop's time registering (session 23's profile, benchmarks/compare/session23).
 *
 * <p>Chunks grow geometrically, as UCX's memory pools do: the first two hold the base count of
 * buffers, each next one twice the last, up to {@link #MAX_CHUNK_MULTIPLE} times the base. A slab
 * of n base chunks' worth thus registers about {@code 4 + n / 8} regions rather than n (on rxe
 * with 1 MiB base chunks, 256 MiB is 35 regions, not 256), while what it registers beyond what
 * it uses stays about one largest chunk beyond the last period's peak, and one base chunk once
 * a whole period was idle. One region for the whole slab would pin its cap up front
 * (rxe has no on-demand paging), and a region cannot grow in place.
 *
 * <p>A buffer's number names its chunk ({@link #chunkOf}) and its place in it. Buffers are taken
 * from the lowest chunk that has a free one, so that use packs into the low chunks and the high
 * ones empty out and can go, the highest first; an idle slab keeps at most one base chunk. Every
 * operation is O(chunks / 64) at worst, bar a trim (O(chunks)), and allocates nothing but a new
 * chunk. Not thread-safe: its owner
 * (a loop) serialises the calls.
 */
final class BufferSlab implements AutoCloseable {
  private static final Logger log = Loggers.getLogger(BufferSlab.class);

  private final ProtectionDomain pd;
  private final int bufferSize;
  /** The largest chunk, in base chunks (a power of two): 8 MiB with the pools' 1 MiB base. */
  static final int MAX_CHUNK_MULTIPLE = 8;
  private static final int LOG_MAX_MULTIPLE = Integer.numberOfTrailingZeros(MAX_CHUNK_MULTIPLE);

  /** Buffers in the base chunk, and its log2 where that is a power of two, else -1 ({@link #chunkOf} shifts then). */
  private final int chunkBuffers;
  private final int chunkShift;
  private final int capacity;
  /** Each chunk's first buffer and its count of buffers. */
  private final int[] chunkStart;
  private final int[] chunkSize;
  private final Set<Access> access;
  private final @Nullable MemoryRegion[] regions;
  private final @Nullable Arena[] arenas;
  private final @Nullable MemorySegment[] memory;
  /** Free buffers of each chunk, as a stack of their places in it. */
  private final int[][] free;
  private final int[] freeCount;
  /** Chunks that are registered and have a free buffer, a bit each. */
  private final long[] withFree;
  /** Buffers taken now, a bit each: a buffer given back twice fails rather than being lent twice. */
  private final long[] taken;
  /** Buffers of the chunks whose memory is allocated (registered, or unpinned with buffers still taken). */
  private int allocatedBuffers;
  /** The highest chunk whose memory is allocated; -1 when none. */
  private int highest = -1;
  private int freeBuffers;
  /** The most buffers taken at once since the last {@link #trim}: what the next trim keeps registered. */
  private int peak;
  private long registeredBytes;
  private long registrations;
  private boolean closed;
  /** Deregistered while buffers were still taken: their memory stays until given back, nothing registers again. */
  private boolean unpinned;

  /**
   * A slab of at most {@code maxBuffers} buffers of {@code bufferSize} bytes, registered in chunks
   * of {@code chunkBuffers}, then twice that, and so on, with {@code access}; nothing is
   * registered yet.
   */
  BufferSlab(ProtectionDomain pd, int bufferSize, int maxBuffers, int chunkBuffers, Set<Access> access) {
    if (bufferSize < 1 || chunkBuffers < 1 || maxBuffers < chunkBuffers) {
      throw new IllegalArgumentException("a slab needs buffers of >= 1 byte, chunks of >= 1 buffer and room for one"
          + " chunk (were " + bufferSize + " bytes, " + chunkBuffers + " per chunk, " + maxBuffers + " at most)");
    }
    this.pd = pd;
    this.bufferSize = bufferSize;
    this.chunkBuffers = chunkBuffers;
    this.chunkShift = Integer.bitCount(chunkBuffers) == 1 ? Integer.numberOfTrailingZeros(chunkBuffers) : -1;
    this.capacity = maxBuffers;
    this.access = Set.copyOf(access);
    int chunks = chunkOf(maxBuffers - 1) + 1;
    chunkStart = new int[chunks];
    chunkSize = new int[chunks];
    for (int c = 0, start = 0; c < chunks; c++) {
      int size = c == 0 ? chunkBuffers : chunkBuffers << Math.min(c - 1, LOG_MAX_MULTIPLE);
      chunkStart[c] = start;
      chunkSize[c] = Math.min(size, maxBuffers - start); // the last chunk ends at the cap
      start += size;
    }
    regions = new MemoryRegion[chunks];
    arenas = new Arena[chunks];
    memory = new MemorySegment[chunks];
    free = new int[chunks][];
    freeCount = new int[chunks];
    withFree = new long[(chunks + 63) >>> 6];
    taken = new long[(maxBuffers + 63) >>> 6];
  }

  /**
   * The chunk of buffer {@code index}: the base count in chunks 0 and 1, then doubling up to
   * {@link #MAX_CHUNK_MULTIPLE} base chunks, then that many each.
   */
  private int chunkOf(int index) {
    int k = chunkShift >= 0 ? index >>> chunkShift : index / chunkBuffers; // a division per lookup is dear under emulation
    if (k < MAX_CHUNK_MULTIPLE) {
      return 32 - Integer.numberOfLeadingZeros(k); // 0 -> 0, 1 -> 1, 2..3 -> 2, 4..7 -> 3
    }
    return LOG_MAX_MULTIPLE + k / MAX_CHUNK_MULTIPLE;
  }

  /** Regions the slab registers when full: what its cap costs in MRs. */
  int maxChunks() {
    return chunkSize.length;
  }

  /** Buffers the slab may hold at most (its cap, rounded down to whole chunks). */
  int capacity() {
    return capacity;
  }

  /** Buffers registered now and not taken. */
  int freeBuffers() {
    return freeBuffers;
  }

  /** Buffers taken now. */
  int inUse() {
    return allocatedBuffers - freeBuffers;
  }

  /** Buffers that {@link #take} can still hand out: the free ones and those the cap allows to register. */
  int available() {
    return capacity() - inUse();
  }

  /** Bytes registered (pinned) now. */
  long registeredBytes() {
    return registeredBytes;
  }

  /** Chunks registered since the slab was made: what growing cost. */
  long registrations() {
    return registrations;
  }

  int bufferSize() {
    return bufferSize;
  }

  /** Takes a free buffer, registering a chunk first when none is free; -1 when the cap is reached. */
  int take() {
    ensureOpen();
    if (unpinned) {
      return -1;
    }
    int chunk = lowestWithFree();
    if (chunk < 0) {
      chunk = register();
      if (chunk < 0) {
        return -1;
      }
    }
    int place = free[chunk][--freeCount[chunk]];
    if (freeCount[chunk] == 0) {
      withFree[chunk >>> 6] &= ~(1L << chunk);
    }
    freeBuffers--;
    peak = Math.max(peak, allocatedBuffers - freeBuffers);
    int index = chunkStart[chunk] + place;
    taken[index >>> 6] |= 1L << index;
    return index;
  }

  /** Gives back buffer {@code index}, taken before; an emptied chunk stays until a {@link #trim} finds it unneeded. */
  void give(int index) {
    ensureOpen();
    if (index < 0 || index >= capacity() || (taken[index >>> 6] & (1L << index)) == 0) {
      throw new IllegalStateException("buffer " + index + " was not taken from " + this);
    }
    taken[index >>> 6] &= ~(1L << index);
    int chunk = chunkOf(index);
    free[chunk][freeCount[chunk]++] = index - chunkStart[chunk];
    withFree[chunk >>> 6] |= 1L << chunk;
    freeBuffers++;
    if (unpinned && freeCount[chunk] == chunkSize[chunk]) {
      deregister(chunk); // its memory was kept only for the buffers still taken
    }
  }

  /**
   * The owner's periodic trim: deregisters the empty chunks, the highest (the largest) first, that
   * the peak in use since the last trim did not need; after a period with nothing taken, all but
   * one base chunk. Returns whether more than a base chunk stays registered (a later trim may
   * free it). O(chunks).
   */
  boolean trim() {
    if (closed || unpinned) {
      return false;
    }
    if (peak == 0) {
      trimIdle(); // idle the whole period: whatever the order buffers came back in, one base chunk at most
    } else {
      for (int c = highest; c >= 0; c--) {
        if (arenas[c] != null && freeCount[c] == chunkSize[c] && allocatedBuffers - chunkSize[c] >= peak) {
          deregister(c);
        }
      }
    }
    peak = inUse();
    return beyondBase();
  }

  /** Whether more than a base chunk is registered: what a {@link #trim} may give back. */
  boolean beyondBase() {
    return allocatedBuffers > chunkBuffers;
  }

  /** Nothing is taken: keeps the lowest registered chunk of at most a base chunk's size, if any, and no other. */
  private void trimIdle() {
    int keep = -1;
    for (int c = 0; c <= highest && keep < 0; c++) {
      if (arenas[c] != null && chunkSize[c] <= chunkBuffers) {
        keep = c;
      }
    }
    for (int c = highest; c >= 0; c--) {
      if (c != keep && arenas[c] != null) {
        deregister(c);
      }
    }
  }

  /** The region of buffer {@code index}'s chunk. */
  MemoryRegion region(int index) {
    MemoryRegion r = regions[chunkOf(index)];
    if (r == null) {
      throw new IllegalStateException("buffer " + index + " is not registered in " + this);
    }
    return r;
  }

  /** The memory of buffer {@code index}'s chunk; the buffer starts at {@link #offset}. */
  MemorySegment memory(int index) {
    MemorySegment m = memory[chunkOf(index)];
    if (m == null) {
      throw new IllegalStateException("buffer " + index + " is not registered in " + this);
    }
    return m;
  }

  /** Where buffer {@code index} starts in its chunk's memory and region. */
  long offset(int index) {
    return (long) (index - chunkStart[chunkOf(index)]) * bufferSize;
  }

  /**
   * Deregisters every chunk (unpins it) but keeps the memory of those with buffers still taken,
   * readable until each is given back, when it is freed; takes fail from now on. What a loop's
   * receive pool does once its connections are gone while users still hold views.
   */
  void unpin() {
    ensureOpen();
    unpinned = true;
    for (int c = 0; c < regions.length; c++) {
      MemoryRegion r = regions[c];
      if (r == null) {
        continue;
      }
      if (freeCount[c] == chunkSize[c]) {
        deregister(c);
        continue;
      }
      regions[c] = null;
      registeredBytes -= (long) chunkSize[c] * bufferSize;
      try {
        r.close();
      } catch (RuntimeException e) {
        log.debug("rdma-reactive: deregistering " + r + " failed", e);
      }
    }
  }

  /** Deregisters and frees every chunk, taken buffers included: their borrowers are gone. Idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (int c = 0; c < regions.length; c++) {
      if (arenas[c] != null) {
        deregister(c);
      }
    }
  }

  private void ensureOpen() {
    if (closed) {
      throw new IllegalStateException(this + " is closed");
    }
  }

  private int lowestWithFree() {
    for (int w = 0; w < withFree.length; w++) {
      if (withFree[w] != 0) {
        return (w << 6) + Long.numberOfTrailingZeros(withFree[w]);
      }
    }
    return -1;
  }

  /** Registers the lowest unregistered chunk, its buffers all free; -1 when every chunk is registered. */
  private int register() {
    int chunk = -1;
    for (int c = 0; c < regions.length; c++) {
      if (regions[c] == null) {
        chunk = c;
        break;
      }
    }
    if (chunk < 0) {
      return -1;
    }
    int size = chunkSize[chunk];
    Arena arena = Arena.ofShared();
    try {
      MemorySegment m = arena.allocate((long) size * bufferSize, 4096);
      regions[chunk] = pd.registerMemory(m, access);
      memory[chunk] = m;
      arenas[chunk] = arena;
    } catch (RuntimeException | Error e) {
      arena.close();
      throw e;
    }
    if (free[chunk] == null) {
      free[chunk] = new int[size];
    }
    for (int i = 0; i < size; i++) {
      free[chunk][i] = size - 1 - i; // lowest place on top
    }
    freeCount[chunk] = size;
    withFree[chunk >>> 6] |= 1L << chunk;
    freeBuffers += size;
    allocatedBuffers += size;
    highest = Math.max(highest, chunk);
    registeredBytes += (long) size * bufferSize;
    registrations++;
    return chunk;
  }

  private void deregister(int chunk) {
    MemoryRegion r = regions[chunk];
    Arena arena = arenas[chunk];
    regions[chunk] = null;
    memory[chunk] = null;
    arenas[chunk] = null;
    freeBuffers -= freeCount[chunk];
    freeCount[chunk] = 0;
    withFree[chunk >>> 6] &= ~(1L << chunk);
    allocatedBuffers -= chunkSize[chunk];
    while (highest >= 0 && arenas[highest] == null) {
      highest--;
    }
    if (r != null) {
      registeredBytes -= (long) chunkSize[chunk] * bufferSize;
    }
    try {
      if (r != null) {
        r.close();
      }
    } catch (RuntimeException e) {
      log.debug("rdma-reactive: deregistering " + r + " failed", e);
    } finally {
      if (arena != null) {
        arena.close();
      }
    }
  }

  @Override
  public String toString() {
    return "BufferSlab[" + bufferSize + " B x " + capacity() + " at most, " + inUse() + " in use, "
        + registeredBytes + " B registered]";
  }
}
