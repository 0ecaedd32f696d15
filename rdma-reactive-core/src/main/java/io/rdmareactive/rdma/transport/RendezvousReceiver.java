package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.verbs.SendRequest;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The receiving half of the rendezvous (see {@link RendezvousSender}): takes the peer's
 * descriptors, checks each before anything is allocated, and, one message at a time while the
 * subscriber has demand, pulls it by RDMA READ into a pooled target ({@link ReadTargetPool}), in
 * READs of at most {@link #READ_FRAGMENT} bytes, at most {@code maxReadBytes} and
 * {@link #READ_DEPTH} of them outstanding; the whole message becomes a {@link ReadView} and the
 * peer is told DONE. The message's length is reserved out of the reassembly budgets (those of
 * {@link FragmentReceiver}) from its first READ until the subscriber takes it. Plain state driven
 * from the connection's drain.
 */
final class RendezvousReceiver {
  /** Largest READ: UCX pipelines rendezvous gets in fragments of this size. */
  static final int READ_FRAGMENT = 512 << 10;
  /** READs outstanding at most: within the responder resources of any device (rxe and mlx5 have 16+). */
  static final int READ_DEPTH = 4;

  /** What a descriptor says, checked. */
  private record Descriptor(int id, int length, long address, int key) {}

  private final ConnectionOperations connection;
  private final ConnectionCounters counters;
  private final FragmentReceiver budget;
  private final ReadTargetPool pool;
  private final long maxMessage;
  private final int maxReadBytes;
  private final SendRequest read = new SendRequest();
  private final ArrayDeque<Descriptor> pending = new ArrayDeque<>();
  private final int[] readLengths = new int[READ_DEPTH];
  private int readsHead;
  private int readsOutstanding;
  // The message being read.
  private @Nullable Descriptor active;
  private ReadTargetPool.@Nullable Target target;
  private long posted;
  private long completed;

  RendezvousReceiver(ConnectionOperations connection, ConnectionCounters counters, FragmentReceiver budget,
      ReadTargetPool pool, long maxMessage, int maxReadBytes) {
    this.connection = connection;
    this.counters = counters;
    this.budget = budget;
    this.pool = pool;
    this.maxMessage = maxMessage;
    this.maxReadBytes = maxReadBytes;
  }

  /**
   * A descriptor of {@code length} bytes at {@code offset} of {@code memory} (a receive buffer the
   * caller gives back after): queued, or null; else the violation, and nothing is queued.
   */
  @Nullable String descriptor(MemorySegment memory, long offset, int length) {
    if (length != Protocol.DESCRIPTOR) {
      return "it sent a rendezvous descriptor of " + length + " bytes, not " + Protocol.DESCRIPTOR;
    }
    int id = memory.get(BatchDecoder.INT, offset);
    int total = memory.get(BatchDecoder.INT, offset + 4);
    long address = memory.get(BatchDecoder.INT, offset + 8) & 0xFFFF_FFFFL;
    address = address << 32 | memory.get(BatchDecoder.INT, offset + 12) & 0xFFFF_FFFFL;
    int key = memory.get(BatchDecoder.INT, offset + 16);
    if (total <= 0 || total > maxMessage) {
      return "it declared a rendezvous message of " + (total & 0xFFFF_FFFFL) + " bytes, outside 1 .. the maximum of "
          + maxMessage + " it was told";
    }
    pending.add(new Descriptor(id, total, address, key));
    return null;
  }

  /**
   * The subscriber cancelled: messages not yet being read are dropped unread, as the messages
   * waiting for it are, and the peer is told DONE for each so that its sends complete and its keys
   * go (the one being read finishes, and is dropped on delivery).
   */
  void dropPending(DoneSink done) {
    Descriptor keep = active != null ? pending.poll() : null;
    Descriptor d;
    while ((d = pending.poll()) != null) {
      done.done(d.id());
    }
    if (keep != null) {
      pending.add(keep);
    }
  }

  /** Registrations its READ targets took so far. */
  long registrations() {
    return pool.registrations();
  }

  /** Descriptors taken and not yet delivered: each stands for a message, as one waiting in a buffer would. */
  int waiting() {
    return pending.size();
  }

  /**
   * Posts READs through {@code post} (which queues one on the send queue, false when it is full):
   * starts the next message when the subscriber has {@code demand} and the budgets hold it, and
   * keeps the one being read going within the bounds.
   */
  void pump(boolean demand, Post post) {
    if (active == null) {
      Descriptor d = pending.peek();
      if (d == null || !demand || connection.failure() != null || !budget.tryReserve(d.length())) {
        return;
      }
      target = pool.take(d.length());
      active = d;
      posted = 0;
      completed = 0;
    }
    Descriptor d = active;
    ReadTargetPool.Target t = target;
    while (posted < d.length() && readsOutstanding < READ_DEPTH && posted - completed < maxReadBytes) {
      int n = (int) Math.min(Math.min(READ_FRAGMENT, d.length() - posted), maxReadBytes - (posted - completed));
      read.read(CompletionDispatcher.RNDV_READ, t.region, posted, n, d.address() + posted, d.key());
      if (!post.queue(read)) {
        return;
      }
      readLengths[(readsHead + readsOutstanding++) % READ_DEPTH] = n;
      posted += n;
    }
  }

  /** Queues a READ on the send queue. */
  interface Post {
    /** False, queuing nothing, when the send queue has no room. */
    boolean queue(SendRequest r);
  }

  /**
   * The oldest READ outstanding retired: once the message is whole it goes to {@code deliver}, and
   * its id to {@code done}. A failed READ fails the connection (the dispatcher says why); the
   * target stays until {@link #close()}.
   */
  void readRetired(boolean success, Consumer<RdmaMessage> deliver, DoneSink done) {
    int n = readLengths[readsHead];
    readsHead = (readsHead + 1) % READ_DEPTH;
    readsOutstanding--;
    Descriptor d = active;
    if (!success || d == null) {
      return;
    }
    completed += n;
    if (completed < d.length()) {
      return;
    }
    ReadTargetPool.Target t = target;
    active = null;
    target = null;
    pending.poll();
    counters.bytesRead(d.length());
    counters.bytesReceived(d.length());
    counters.messageReceived();
    deliver.accept(new ReadView(counters, pool, t, d.length()));
    done.done(d.id());
  }

  /** Where a DONE goes. */
  interface DoneSink {
    /** The message {@code id} is read: the peer may revoke its key. */
    void done(int id);
  }

  /**
   * The queue pair is disconnected and its work requests done, so no READ writes any more: the
   * target of a message half read goes back, and the pool closes (see {@link ReadTargetPool#close}).
   */
  void close() {
    ReadTargetPool.Target t = target;
    target = null;
    active = null;
    pending.clear();
    if (t != null) {
      pool.giveBack(t);
    }
    pool.close();
  }
}
