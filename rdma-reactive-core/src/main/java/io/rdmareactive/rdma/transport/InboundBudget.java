package io.rdmareactive.rdma.transport;

import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Reassembly bytes shared by a server's connections ({@link RdmaOption#MAX_SERVER_INBOUND_BYTES}):
 * a connection reserves a fragmented message's declared length before it allocates it, and frees
 * it when the message is delivered or dropped. A connection that finds the total spent waits,
 * granting its peer nothing, and is woken (its drain called) when bytes come free. Any thread;
 * nothing blocks, and the counter allocates nothing.
 */
final class InboundBudget {
  private final long max;
  private final AtomicLong used = new AtomicLong();
  private final Set<ConnectionOperations> waiting = ConcurrentHashMap.newKeySet();

  InboundBudget(long max) {
    this.max = max;
  }

  /** A budget without a shared total: a client's connection has only its own. */
  static InboundBudget unshared() {
    return new InboundBudget(Long.MAX_VALUE);
  }

  /** Reserves {@code n} bytes; false, with {@code waiter} to be woken when bytes come free, when the total is spent. */
  boolean tryReserve(long n, ConnectionOperations waiter) {
    if (take(n)) {
      return true;
    }
    waiting.add(waiter);
    if (take(n)) { // bytes freed between the first try and the add: no wakeup would come for them
      waiting.remove(waiter);
      return true;
    }
    return false;
  }

  private boolean take(long n) {
    for (;;) {
      long u = used.get();
      if (u + n > max) {
        return false;
      }
      if (used.compareAndSet(u, u + n)) {
        return true;
      }
    }
  }

  /** Frees {@code n} reserved bytes and wakes the connections waiting for some. */
  void free(long n) {
    if (n == 0) {
      return;
    }
    used.addAndGet(-n);
    for (Iterator<ConnectionOperations> it = waiting.iterator(); it.hasNext(); ) {
      ConnectionOperations c = it.next();
      it.remove();
      c.drain();
    }
  }

  /** A closing connection waits no more. */
  void forget(ConnectionOperations c) {
    waiting.remove(c);
  }

  /** Bytes reserved now, across the connections. */
  long used() {
    return used.get();
  }
}
