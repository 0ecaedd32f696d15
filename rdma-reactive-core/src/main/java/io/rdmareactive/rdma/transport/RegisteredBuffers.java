package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLongArray;
import org.jspecify.annotations.Nullable;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * A connection's registered memory: one region of fixed-size receive buffers, one of send buffers,
 * and their free lists. The free lists belong to the channel's drain; {@link #markReleased} is the
 * one method any thread may call (a message's release), and it allocates nothing and never blocks.
 */
final class RegisteredBuffers {
  private static final Logger log = Loggers.getLogger(RegisteredBuffers.class);

  final int bufferSize;
  final MemorySegment receiveMemory;
  final MemorySegment sendMemory;
  final MemoryRegion receiveRegion;
  final MemoryRegion sendRegion;
  private final Arena arena;
  private final int[] freeReceives;
  private int freeReceiveCount;
  private final int[] freeSends;
  private int freeSendCount;
  /** Released receive buffers, a bit per index, until the drain takes them back. */
  private final AtomicLongArray releasedBits;

  /** Allocates and registers the buffers on {@code pd}; on failure frees what it made before throwing. */
  static RegisteredBuffers register(ProtectionDomain pd, int receiveCount, int sendCount, int bufferSize) {
    Arena a = Arena.ofShared();
    MemoryRegion rr = null;
    MemoryRegion sr = null;
    try {
      MemorySegment receiveMemory = a.allocate((long) receiveCount * bufferSize, 4096);
      MemorySegment sendMemory = a.allocate((long) sendCount * bufferSize, 4096);
      rr = pd.registerMemory(receiveMemory, Access.local());
      sr = pd.registerMemory(sendMemory, Access.local());
      return new RegisteredBuffers(a, receiveMemory, sendMemory, rr, sr, receiveCount, sendCount, bufferSize);
    } catch (RuntimeException e) {
      AbstractRdmaResource.closeQuietly(rr);
      AbstractRdmaResource.closeQuietly(sr);
      a.close();
      throw e;
    }
  }

  private RegisteredBuffers(Arena arena, MemorySegment receiveMemory, MemorySegment sendMemory,
      MemoryRegion receiveRegion, MemoryRegion sendRegion, int receiveCount, int sendCount, int bufferSize) {
    this.arena = arena;
    this.receiveMemory = receiveMemory;
    this.sendMemory = sendMemory;
    this.receiveRegion = receiveRegion;
    this.sendRegion = sendRegion;
    this.bufferSize = bufferSize;
    freeReceives = new int[receiveCount];
    for (int i = receiveCount - 1; i >= 0; i--) {
      freeReceives[freeReceiveCount++] = i;
    }
    freeSends = new int[sendCount];
    for (int i = sendCount - 1; i >= 0; i--) {
      freeSends[freeSendCount++] = i;
    }
    releasedBits = new AtomicLongArray((receiveCount + 63) >>> 6);
  }

  /** Where buffer {@code index} starts in its region. */
  long offset(int index) {
    return (long) index * bufferSize;
  }

  int freeReceives() {
    return freeReceiveCount;
  }

  int takeReceive() {
    return freeReceives[--freeReceiveCount];
  }

  void freeReceive(int index) {
    freeReceives[freeReceiveCount++] = index;
  }

  int freeSends() {
    return freeSendCount;
  }

  int takeSend() {
    return freeSends[--freeSendCount];
  }

  void freeSend(int index) {
    freeSends[freeSendCount++] = index;
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
        freeReceives[freeReceiveCount++] = index;
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

  /** Deregisters both regions; the memory stays readable until {@link #free}. */
  void deregister() {
    AbstractRdmaResource.closeQuietly(receiveRegion);
    AbstractRdmaResource.closeQuietly(sendRegion);
  }

  /** Frees the memory itself. */
  void free() {
    arena.close();
  }

}
