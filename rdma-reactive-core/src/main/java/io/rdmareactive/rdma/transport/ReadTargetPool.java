package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import org.jspecify.annotations.Nullable;

/**
 * Registered memory that RDMA READs of rendezvous messages land in, kept for reuse so that a
 * message costs no registration once the pool has its size: power-of-two size classes (from 64
 * KiB), each target registered once (LOCAL_WRITE) on the connection's protection domain. A target
 * goes back when the message over it is released, from any thread; what the pool keeps free is
 * bounded by {@code maxFreeBytes}, beyond which a returned target is deregistered. Closed with its
 * connection, once no READ still writes (its queue pair disconnected, its work requests done), and
 * before the protection domain may go: every registration goes then, a target still held by a
 * message keeping only its memory, freed by that message's release.
 */
final class ReadTargetPool {
  private static final int SMALLEST_CLASS = 16; // 64 KiB

  /** One READ target: its memory and registration. */
  static final class Target {
    final Arena arena;
    final MemorySegment memory;
    final MemoryRegion region;
    final int sizeClass;
    /**
     * The targets taken and not given back form a list through these links (the pool's lock):
     * {@link #close} deregisters them, each is freed when given back. An intrusive list spares the
     * identity set's entry object and hashing per message.
     */
    @Nullable Target prevHeld;
    @Nullable Target nextHeld;

    Target(Arena arena, MemorySegment memory, MemoryRegion region, int sizeClass) {
      this.arena = arena;
      this.memory = memory;
      this.region = region;
      this.sizeClass = sizeClass;
    }
  }

  private final ProtectionDomain pd;
  private final long maxFreeBytes;
  @SuppressWarnings("unchecked")
  private final ArrayDeque<Target>[] free = new ArrayDeque[32];
  /** The first of the targets taken and not given back (see {@link Target#nextHeld}), or null. */
  private @Nullable Target held;
  private long freeBytes;
  private long registrations;
  private boolean closed;

  ReadTargetPool(ProtectionDomain pd, long maxFreeBytes) {
    this.pd = pd;
    this.maxFreeBytes = maxFreeBytes;
  }

  /** A target of at least {@code length} bytes: a free one of its class, or one registered now. */
  synchronized Target take(int length) {
    if (closed) {
      throw new IllegalStateException("the READ target pool is closed");
    }
    int sizeClass = Math.max(SMALLEST_CLASS, 32 - Integer.numberOfLeadingZeros(Math.max(1, length - 1)));
    ArrayDeque<Target> q = free[sizeClass];
    Target t = q == null ? null : q.poll();
    if (t != null) {
      freeBytes -= t.memory.byteSize();
      hold(t);
      return t;
    }
    Arena arena = Arena.ofShared();
    try {
      MemorySegment memory = arena.allocate(1L << sizeClass, 4096);
      MemoryRegion region = pd.registerMemory(memory, Access.local());
      registrations++;
      Target made = new Target(arena, memory, region, sizeClass);
      hold(made);
      return made;
    } catch (RuntimeException | Error e) {
      arena.close();
      throw e;
    }
  }

  /** {@code t} is no longer read into nor read: kept for reuse, or freed. Any thread. */
  synchronized void giveBack(Target t) {
    unhold(t);
    long size = t.memory.byteSize();
    if (closed || freeBytes + size > maxFreeBytes) {
      destroy(t);
      return;
    }
    ArrayDeque<Target> q = free[t.sizeClass];
    if (q == null) {
      q = free[t.sizeClass] = new ArrayDeque<>();
    }
    q.push(t);
    freeBytes += size;
  }

  /** Registrations made so far (a message that reuses a target makes none). */
  synchronized long registrations() {
    return registrations;
  }

  /** Frees the free targets; those still held are freed when given back. */
  synchronized void close() {
    closed = true;
    for (ArrayDeque<Target> q : free) {
      Target t;
      while (q != null && (t = q.poll()) != null) {
        destroy(t);
      }
    }
    freeBytes = 0;
    for (Target t = held; t != null; t = t.nextHeld) {
      t.region.close(); // its memory stays for the message over it
    }
  }

  private void hold(Target t) {
    t.prevHeld = null;
    t.nextHeld = held;
    if (held != null) {
      held.prevHeld = t;
    }
    held = t;
  }

  private void unhold(Target t) {
    if (t.prevHeld != null) {
      t.prevHeld.nextHeld = t.nextHeld;
    } else if (held == t) {
      held = t.nextHeld;
    }
    if (t.nextHeld != null) {
      t.nextHeld.prevHeld = t.prevHeld;
    }
    t.prevHeld = null;
    t.nextHeld = null;
  }

  private static void destroy(Target t) {
    try {
      t.region.close(); // a no-op when close() deregistered it already
    } finally {
      t.arena.close();
    }
  }
}
