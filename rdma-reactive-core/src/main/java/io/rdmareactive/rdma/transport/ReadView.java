package io.rdmareactive.rdma.transport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A rendezvous message, in place in the pooled memory its RDMA READs wrote ({@link
 * ReadTargetPool}): delivered with no copy. Its release, from any thread, gives the memory back to
 * the pool. {@link #segment()} is scoped to the message by an arena of its own, closed by the
 * release, so a segment kept past it fails rather than read the next message in that memory.
 */
final class ReadView implements RdmaMessage {
  /** In {@link #scope} once released. */
  private static final Arena GONE = Arena.ofAuto();

  private final ConnectionCounters counters;
  private final ReadTargetPool pool;
  private final ReadTargetPool.Target target;
  private final int length;
  private final AtomicReference<Arena> scope = new AtomicReference<>();

  ReadView(ConnectionCounters counters, ReadTargetPool pool, ReadTargetPool.Target target, int length) {
    this.counters = counters;
    this.pool = pool;
    this.target = target;
    this.length = length;
    counters.messageHeld();
  }

  @Override
  public int length() {
    return length;
  }

  @Override
  public MemorySegment segment() {
    Arena s = scope.get();
    if (s == null) {
      Arena a = Arena.ofShared();
      if (scope.compareAndSet(null, a)) {
        s = a;
      } else {
        a.close();
        s = scope.get();
      }
    }
    if (s == GONE) {
      throw new IllegalStateException("message already released");
    }
    return target.memory.asSlice(0, length).reinterpret(s, null).asReadOnly();
  }

  @Override
  public void release() {
    Arena s = scope.getAndSet(GONE);
    if (s == GONE) {
      return;
    }
    counters.messageLetGo();
    if (s != null) {
      s.close(); // a reader racing this fails with IllegalStateException, and the memory goes back after
    }
    pool.giveBack(target);
  }
}
