package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.ReceiveRequest;
import io.rdmareactive.rdma.verbs.SharedReceiveQueue;
import io.rdmareactive.rdma.verbs.SharedReceiveQueueOptions;
import java.lang.foreign.MemorySegment;
import org.jspecify.annotations.Nullable;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The receive memory of one loop and device (issue 21): a shared receive queue that every QP of
 * the loop's connections is attached to, and the {@link BufferSlab} of registered buffers posted
 * to it. Connections own no receive buffers: each is a {@link Member} that promises grants to its
 * peer out of the pool and holds the buffers its peer's SENDs landed in until it gives them back.
 *
 * <p><b>Reservations.</b> Every member has {@link #GUARANTEED} buffers (the credit reserve and one
 * more) guaranteed, posted or held: a loop that cannot back one more member's reserve refuses it, naming
 * {@link RdmaOption#LOOP_RECEIVE_BUFFERS}. Beyond that a member borrows elastic buffers while the
 * slab has them, as its subscriber's demand asks (up to {@code BUFFER_COUNT}, the connection's own
 * bound). What a member holds undelivered counts against it, never against a neighbour.
 *
 * <p><b>Refill by counting.</b> The pool keeps its SRQ posted with every elastic grant outstanding,
 * one of each member's reserve grants, and a headroom of one connection's worth
 * ({@code BUFFER_COUNT + RESERVE}). A member's other {@link Protocol#RESERVE} reserve grants are
 * backed by the slab's capacity (its guarantee) but not posted: that is what makes an idle
 * connection cost one receive buffer, not three (UCX's SRQ is sized the same way, below the sum
 * of its endpoints' windows). A burst of reserve SENDs from more peers than the headroom covers
 * finds the SRQ short for as long as the loop takes to repost; the peer's QP then retries after
 * an RNR NAK (its {@code RNR_RETRY}), which costs it time, loses nothing and fails nobody while the
 * loop lives. A violator, which consumes a receive posted for a neighbour before any software
 * sees it, is failed on its first SEND beyond its grant ({@code ProtocolViolationException}) and
 * its buffer comes back here. Every arrival and every give-back passes through the pool, so it
 * knows the posted count exactly and needs no SRQ limit event.
 *
 * <p><b>Lifetime.</b> The SRQ lives while an endpoint is attached; then it is destroyed (what was
 * posted on it goes with it) and the slab follows once the last buffer a member held is given
 * back (a view the user keeps past close keeps its buffer readable). The pool holds a lease on the
 * loop's PD until then. Thread-safe: the loop's drains call it, and a view released on another
 * thread after its connection closed gives its buffer back directly.
 */
final class ReceivePool extends LoopBufferPool {
  private static final Logger log = Loggers.getLogger(ReceivePool.class);
  /**
   * Buffers each member is guaranteed, posted or held: the credit reserve plus one, so that a
   * connection the slab lends nothing more to still works as one of {@code BUFFER_COUNT} 1 does
   * (with demand it has {@code RESERVE + 1} receives posted, which {@link CreditWindow}'s rule 3
   * needs for a stalled sender to get a credit update).
   */
  static final int GUARANTEED = Protocol.RESERVE + 1;
  /** Bytes of a slab's first chunk; later ones double up to 8 of these: few MRs on a busy loop. */
  static final int CHUNK_BYTES = 1 << 20;

  private final ProtectionDomain pd;
  private final Runnable releasePd;
  private final SharedReceiveQueue srq;
  private final int bufferSize;
  private final int headroom;
  private final int maxPosted;
  private final ReceiveRequest request = new ReceiveRequest();
  /** Receives on the SRQ, completed ones not yet processed included. */
  private int posted;
  /** Grants outstanding, all members together. */
  private int promised;
  /** Reserve grants outstanding that the SRQ need not hold a receive for (see {@link Member#unposted}). */
  private int unpostedGrants;
  /** Buffers members hold (a SEND landed in them and they have not given them back). */
  private int held;
  /** Buffers members use beyond their reserve, posted or held. */
  private int elastic;
  /** Buffers held by members that left (views kept past their connection's close). */
  private int orphaned;
  private int members;
  /** Endpoints attached to the SRQ. */
  private int users;
  private boolean retired;
  private boolean unpinned;
  private boolean closed;
  private long refills;

  /**
   * A pool on {@code pd} of at most {@code maxBuffers} buffers of {@code bufferSize} bytes, with
   * {@code headroom} posted beyond the grants, trimmed on {@code timer}; {@code releasePd} gives
   * back the pool's PD lease.
   */
  ReceivePool(ProtectionDomain pd, int bufferSize, int maxBuffers, int headroom, Timer timer, Runnable releasePd) {
    super(slab(pd, bufferSize, maxBuffers, headroom), timer);
    this.pd = pd;
    this.releasePd = releasePd;
    this.bufferSize = bufferSize;
    this.headroom = headroom;
    this.srq = pd.createSharedReceiveQueue(SharedReceiveQueueOptions.of(slab.capacity()));
    this.maxPosted = Math.min(slab.capacity(), srq.maxWorkRequests());
  }

  private static BufferSlab slab(ProtectionDomain pd, int bufferSize, int maxBuffers, int headroom) {
    int chunk = chunkBuffers(bufferSize, maxBuffers);
    int deviceMax = pd.context().queryDevice().maxSharedReceiveQueueWorkRequests();
    int capacity = Math.min(maxBuffers, deviceMax) / chunk * chunk;
    if (capacity < headroom + GUARANTEED) {
      throw new IllegalArgumentException("LOOP_RECEIVE_BUFFERS of " + maxBuffers + " (the device allows " + deviceMax
          + " receives on an SRQ) cannot hold one connection: it needs " + (headroom + GUARANTEED)
          + " buffers, in whole chunks of " + chunk);
    }
    return new BufferSlab(pd, bufferSize, capacity, chunk, Access.local());
  }

  SharedReceiveQueue queue() {
    return srq;
  }

  int bufferSize() {
    return bufferSize;
  }

  /** An endpoint attached its QP to the SRQ. */
  synchronized void attach() {
    users++;
  }

  /** An endpoint's QP is gone; with the last one the SRQ goes. Returns whether the pool is retired now. */
  synchronized boolean detach() {
    if (--users > 0) {
      return false;
    }
    retired = true;
    posted = 0; // destroying the SRQ drops what was posted on it; those buffers go with the slab
    try {
      srq.close();
    } catch (RuntimeException e) {
      log.warn("rdma-reactive: destroying " + srq + " failed", e);
    }
    closeIfDone();
    return true;
  }

  /**
   * A connection joins: its reserve is guaranteed from now on.
   *
   * @throws ConnectionException (REFUSED) when the pool cannot back one more reserve
   */
  synchronized Member join() {
    int needed = (members + 1) * GUARANTEED + elastic + orphaned + headroom;
    if (retired || needed > slab.capacity()) {
      throw new ConnectionException(ConnectionException.Reason.REFUSED, "the loop's shared receive queue cannot back"
          + " one more connection: " + members + " connections reserve " + GUARANTEED + " buffers each and "
          + (elastic + orphaned) + " more are borrowed or kept, with a headroom of " + headroom + ", out of "
          + slab.capacity()
          + " (raise LOOP_RECEIVE_BUFFERS, use more loops, or turn SHARED_RECEIVE_QUEUE off)", null);
    }
    members++;
    return new Member();
  }

  /** Buffers the slab may hold at most. */
  int capacity() {
    return slab.capacity();
  }

  /** Receives posted on the SRQ now. */
  synchronized int posted() {
    return posted;
  }

  /** Receives posted to bring the SRQ back to its target. */
  synchronized long refills() {
    return refills;
  }

  /** Receives the SRQ should hold: the grants outstanding that must be posted, plus the headroom. */
  private int target() {
    return Math.min(maxPosted, promised - unpostedGrants + headroom);
  }

  /** Posts from the slab until the SRQ holds its {@link #target}. */
  private void refill() {
    int target = target();
    while (!retired && posted < target) {
      int index = slab.take();
      if (index < 0) {
        break;
      }
      post(index);
    }
    trimLater();
  }

  private void post(int index) {
    try {
      srq.postReceive(request.set(CompletionDispatcher.RECV | index, slab.region(index), slab.offset(index),
          bufferSize));
    } catch (RuntimeException e) {
      slab.give(index);
      throw e;
    }
    posted++;
    refills++;
  }

  /**
   * Once retired with no member left, the slab is unpinned and the PD lease given back (views kept
   * past close keep their buffers' memory, not its registration, as a connection's own buffers
   * do); once no buffer is held either, the memory goes too.
   */
  private void closeIfDone() {
    if (!retired || members > 0 || closed) {
      return;
    }
    if (!unpinned) {
      unpinned = true;
      stopTrims();
      slab.unpin();
      releasePd.run();
    }
    if (held == 0) {
      closed = true;
      slab.close();
    }
  }

  /** One connection's share of the pool. Its methods are the pool's, serialised with it. */
  final class Member {
    /** Grants this member promised its peer that no SEND used yet. */
    private int promised;
    private int held;
    private boolean left;

    private int out() {
      return Math.max(0, promised + held - GUARANTEED);
    }

    /**
     * Of this member's grants outstanding, those the SRQ holds no receive for: beyond the first,
     * up to {@link Protocol#RESERVE} of them. Its peer spends them only on a burst (two data
     * SENDs and a credit update before a grant comes back), and the headroom or an RNR retry
     * covers that.
     */
    private int unposted() {
      return Math.min(Math.max(promised - 1, 0), Protocol.RESERVE);
    }

    /** Changes this member's grants outstanding by {@code delta}, keeping the pool's counts. */
    private void addPromised(int delta) {
      int before = out();
      int unpostedBefore = unposted();
      promised += delta;
      ReceivePool.this.promised += delta;
      unpostedGrants += unposted() - unpostedBefore;
      elastic += out() - before;
    }

    /** Promises up to {@code wanted} more grants: the reserve always, beyond it as the slab allows; how many. */
    int promise(int wanted) {
      synchronized (ReceivePool.this) {
        int n = 0;
        while (n < wanted && !left) {
          if (promised + held >= GUARANTEED
              && members * GUARANTEED + elastic + orphaned + headroom >= slab.capacity()) {
            break; // beyond the reserve and the slab is lent out: no elastic grant until buffers come back
          }
          addPromised(1);
          n++;
        }
        refill();
        return n;
      }
    }

    /** Takes back {@code n} grants the peer can no longer use (its QP is gone). */
    void unpromise(int n) {
      synchronized (ReceivePool.this) {
        addPromised(-Math.min(n, promised));
      }
    }

    /**
     * A SEND of this member's peer landed in buffer {@code index}: the member holds it now.
     * Returns the memory of its chunk (read under the same lock), or null when it was beyond the
     * grants promised (the caller fails the connection and gives the buffer back).
     */
    @Nullable MemorySegment arrived(int index) {
      synchronized (ReceivePool.this) {
        posted--;
        boolean covered = promised > 0;
        if (covered) {
          addPromised(-1);
        }
        int before = out();
        held++;
        ReceivePool.this.held++;
        elastic += out() - before;
        refill();
        return covered ? slab.memory(index) : null;
      }
    }

    /** The member is done with buffer {@code index}: reposted where the SRQ is short, else back to the slab. */
    void give(int index) {
      synchronized (ReceivePool.this) {
        int before = out();
        held--;
        ReceivePool.this.held--;
        if (left) {
          orphaned--;
        } else {
          elastic += out() - before;
        }
        if (!retired && posted < target()) {
          try {
            post(index);
          } catch (RuntimeException e) { // the buffer went back to the slab; the next refill tries again
            log.warn("rdma-reactive: reposting a receive on " + srq + " failed", e);
          }
        } else {
          slab.give(index);
        }
        closeIfDone();
      }
    }

    /** The connection closed: its grants go back; the buffers it still holds come back with {@link #give}. */
    void leave() {
      synchronized (ReceivePool.this) {
        if (left) {
          return;
        }
        unpromise(promised);
        elastic -= out(); // what it still holds no longer counts beyond a guarantee: all of it does
        orphaned += held;
        left = true;
        members--;
        closeIfDone();
      }
    }
  }

  @Override
  public String toString() {
    return "ReceivePool[" + srq + ", " + slab + "]";
  }
}
