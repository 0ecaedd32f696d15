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
  /** Where a message read whole goes: the messages waiting for the subscriber. */
  private final Consumer<RdmaMessage> deliver;
  /** READs go on the connection's send queue, through its outbound side. */
  private final Post post;
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
      TransportConfig config, Consumer<RdmaMessage> deliver) {
    this.connection = connection;
    this.counters = counters;
    this.budget = budget;
    this.maxReadBytes = config.get(RdmaOption.MAX_READ_BYTES);
    this.pool = new ReadTargetPool(connection.protectionDomain(), maxReadBytes);
    this.maxMessage = config.inboundMessageLimit();
    this.deliver = deliver;
    this.post = r -> connection.sender().queueLocal(r);
  }

  /**
   * A descriptor or a DONE ({@code imm} says which) of {@code length} bytes at {@code offset} of
   * {@code memory}, a receive buffer the caller gives back after: a descriptor is queued, a DONE
   * goes to the sending half; either fails the connection when malformed.
   */
  void take(MemorySegment memory, long offset, int length, int imm) {
    String violation;
    if ((imm & Protocol.DONE) != 0) {
      violation = length != Protocol.DONE_LENGTH ? "it sent a DONE of " + length + " bytes, not " + Protocol.DONE_LENGTH : null;
      if (violation == null) {
        connection.sender().rendezvous().doneReceived(memory.get(BatchDecoder.INT, offset));
      }
    } else {
      violation = descriptor(memory, offset, length);
    }
    if (violation != null) {
      connection.protocolError(violation);
    }
  }

  /**
   * A descriptor of {@code length} bytes at {@code offset} of {@code memory} (a receive buffer the
   * caller gives back after): queued, or null; else the violation, and nothing is queued.
   */
  private @Nullable String descriptor(MemorySegment memory, long offset, int length) {
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
  private void dropPending() {
    Descriptor keep = active != null ? pending.poll() : null;
    Descriptor d;
    while ((d = pending.poll()) != null) {
      connection.sender().rendezvous().queueDone(d.id());
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
   * Posts READs on the send queue: starts the next message when the subscriber has {@code demand}
   * and the budgets hold it, and keeps the one being read going within the bounds. A subscriber
   * that {@code cancelled} has the messages not yet being read dropped ({@link #dropPending}).
   */
  void pump(boolean cancelled, boolean demand) {
    if (cancelled) {
      dropPending();
    }
    if (active == null) {
      Descriptor d = pending.peek();
      if (d == null || !demand || cancelled || connection.failure() != null || !budget.tryReserve(d.length())) {
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
   * The oldest READ outstanding retired: once the message is whole it is delivered, and the peer
   * is told DONE. A failed READ fails the connection (the dispatcher says why); the target stays
   * until {@link #close()}.
   */
  void readRetired(boolean success) {
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
    connection.sender().rendezvous().queueDone(d.id());
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
