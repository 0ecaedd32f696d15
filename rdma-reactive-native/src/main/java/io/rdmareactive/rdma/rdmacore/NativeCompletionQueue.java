package io.rdmareactive.rdma.rdmacore;

import reactor.core.publisher.Flux;
import io.rdmareactive.rdma.verbs.CompletionStreamOptions;
import io.rdmareactive.rdma.loop.CompletionStreams;
import static io.rdmareactive.rdma.rdmacore.VerbsLayout.*;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.CompletionQueueOptions;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import io.rdmareactive.rdma.verbs.WorkCompletionHandler;
import io.rdmareactive.rdma.verbs.WorkCompletionView;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import org.jspecify.annotations.Nullable;

/**
 * A completion queue (ibv_create_cq). Polling goes through {@code ibv_context.ops.poll_cq} into a
 * native ibv_wc array owned by this CQ, read in place by one reused view: nothing is allocated per
 * poll. The CQ also keeps the depth budget: QPs (and XRC SRQs) reserve their queue depths here and
 * are rejected when the sum would exceed the CQ's depth. Together with each QP holding a work
 * request's slot until its completion is polled here (not merely written, as rxe frees it), the
 * CQ cannot overflow: every completion polled is handed to its QP (found by number in a table of
 * the QPs completing here) before the handler sees it, so the handler may post its replacement.
 */
final class NativeCompletionQueue extends AbstractRdmaResource implements CompletionQueue, NativeContextBound {
  /** Entries polled per ops.poll_cq call (the wc array's length). */
  static final int WC_BATCH = 32;
  private static final int IBV_WC_WITH_IMM = 1 << 1;
  private static final ValueLayout.OfInt BE32 = JAVA_INT.withOrder(ByteOrder.BIG_ENDIAN);

  private final NativeContext context;
  private final @Nullable NativeCompletionChannel channel;
  final MemorySegment cq;
  private final long id;
  private final int depth;
  /** The poll array, freed by the GC: see NativeQueuePair's arena for why not at close. */
  private final Arena arena = Arena.ofAuto();
  private final MemorySegment wcs;
  private final View view = new View();
  private int reserved; // guarded by this
  /** The QPs completing here, by number; copied on change (rare), read once per poll. */
  private volatile QpTable queuePairs = QpTable.EMPTY;
  // Not this CQ's monitor: a QP unregisters while closing (under its own monitor), and pollers
  // hold this CQ's monitor while handlers post on QPs.
  private final Object queuePairsLock = new Object();
  private int unackedEvents; // guarded by this

  private NativeCompletionQueue(NativeContext context, @Nullable NativeCompletionChannel channel, MemorySegment cq,
      long id) {
    super("CompletionQueue[" + context.deviceName() + " #" + id + "]", context);
    this.context = context;
    this.channel = channel;
    this.cq = cq.reinterpret(SIZEOF_CQ);
    this.id = id;
    this.depth = this.cq.get(JAVA_INT, CQ_CQE);
    this.wcs = arena.allocate(SIZEOF_WC * WC_BATCH, 8);
  }

  static NativeCompletionQueue create(NativeContext context, CompletionQueueOptions options) {
    context.ensureOpen();
    NativeCompletionChannel ch = null;
    CompletionChannel requested = options.channel();
    if (requested != null) {
      if (!(requested instanceof NativeCompletionChannel n)) {
        throw new IllegalArgumentException("completion channel " + requested + " is not a native one");
      }
      context.checkOwn(n, "completion channel");
      ch = n;
    }
    if (options.vector() >= context.numCompVectors) {
      throw new IllegalArgumentException("completion vector " + options.vector() + " is out of range: "
          + context.deviceName() + " has " + context.numCompVectors);
    }
    if (ch != null) {
      ch.acquireLease(); // before the native call: a closed channel fails here, not in C
    }
    long id = context.reserveCqId();
    MemorySegment cq;
    try {
      // cq_context carries the id, so ibv_get_cq_event leads back to this Java object.
      cq = Native.created("ibv_create_cq", Ibverbs.createCq(context.ctx, options.depth(),
          MemorySegment.ofAddress(id), ch == null ? MemorySegment.NULL : ch.channel, options.vector()));
    } catch (RuntimeException | Error e) {
      if (ch != null) {
        ch.releaseLease();
      }
      throw e;
    }
    try {
      NativeCompletionQueue q = new NativeCompletionQueue(context, ch, cq, id);
      context.bindCq(id, q);
      return q;
    } catch (RuntimeException | Error e) {
      Ibverbs.destroyCq(cq);
      if (ch != null) {
        ch.releaseLease();
      }
      throw e;
    }
  }

  @Override
  public NativeContext nativeContext() {
    return context;
  }

  @Override
  public RdmaContext context() {
    return context;
  }

  @Override
  public int depth() {
    return depth;
  }

  @Override
  public @Nullable CompletionChannel channel() {
    return channel;
  }

  /**
   * Reserves {@code entries} completions for a work queue of {@code owner}.
   *
   * @throws IllegalArgumentException when the CQ's depth would be exceeded
   */
  synchronized void reserve(int entries, String owner) {
    ensureOpen();
    if (entries > depth - reserved) {
      throw new IllegalArgumentException(owner + " needs " + entries + " completion entries but " + this
          + " has depth " + depth + " with " + reserved + " already reserved (" + (depth - reserved)
          + " free); create a deeper CQ or smaller queues");
    }
    reserved += entries;
  }

  synchronized void unreserve(int entries) {
    reserved = Math.max(0, reserved - entries);
  }

  synchronized int reserved() {
    return reserved;
  }

  /** Lets polling retire {@code qp}'s work requests as their completions are polled here. */
  void register(NativeQueuePair qp) {
    synchronized (queuePairsLock) {
      queuePairs = queuePairs.with(qp);
    }
  }

  void unregister(NativeQueuePair qp) {
    synchronized (queuePairsLock) {
      queuePairs = queuePairs.without(qp);
    }
  }

  synchronized void eventReceived() {
    unackedEvents++;
  }

  @Override
  public synchronized int poll(int max, WorkCompletionHandler handler) {
    ensureOpen();
    if (max < 0) {
      throw new IllegalArgumentException("max must be >= 0, was " + max);
    }
    int total = 0;
    while (total < max) {
      int want = Math.min(WC_BATCH, max - total);
      int n;
      try {
        n = InlineVerbs.pollCq(context.pollCqFn, cq, want, wcs);
      } catch (Throwable t) {
        throw new IllegalStateException(t);
      }
      if (n < 0) {
        throw Native.failure("ibv_poll_cq", io.rdmareactive.rdma.NativeCallException.EIO, this.toString());
      }
      QpTable table = queuePairs;
      for (int i = 0; i < n; i++) {
        long base = (long) i * SIZEOF_WC;
        retire(table, base);
        view.base = base;
        try {
          handler.onCompletion(view);
        } catch (RuntimeException | Error e) {
          // The rest of the batch is gone from the CQ: its work requests retire all the same.
          for (int j = i + 1; j < n; j++) {
            retire(table, (long) j * SIZEOF_WC);
          }
          throw e;
        }
      }
      total += n;
      if (n < want || isClosed()) {
        break;
      }
    }
    return total;
  }

  /** Frees the queue slot(s) the completion at {@code base} held on its QP. */
  private void retire(QpTable table, long base) {
    NativeQueuePair qp = table.get(wcs.get(JAVA_INT, base + WC_QP_NUM));
    if (qp != null) {
      qp.completed(this, wcs.get(JAVA_INT, base + WC_STATUS), wcs.get(JAVA_INT, base + WC_OPCODE),
          wcs.get(JAVA_LONG, base + WC_WR_ID));
    }
  }

  @Override
  public synchronized void requestNotification(boolean solicitedOnly) {
    ensureOpen();
    if (channel == null) {
      throw new IllegalStateException(this + " has no completion channel to notify");
    }
    int rc;
    try {
      rc = InlineVerbs.reqNotifyCq(context.reqNotifyCqFn, cq, solicitedOnly ? 1 : 0, context.postsInKernel());
    } catch (Throwable t) {
      throw new IllegalStateException(t);
    }
    if (rc != 0) {
      throw Native.failure("ibv_req_notify_cq", Math.abs(rc), toString());
    }
  }

  @Override
  public synchronized void acknowledgeEvents(int count) {
    ensureOpen();
    if (count < 0 || count > unackedEvents) {
      // Acking more than was received would make ibv_destroy_cq wait forever.
      throw new IllegalArgumentException("cannot acknowledge " + count + " events: " + unackedEvents
          + " taken from the channel are unacknowledged");
    }
    if (count > 0) {
      Ibverbs.ackCqEvents(cq, count);
      unackedEvents -= count;
    }
  }

  @Override
  protected void release() {
    if (unackedEvents > 0) {
      // ibv_destroy_cq blocks until every event taken for the CQ is acknowledged.
      Ibverbs.ackCqEvents(cq, unackedEvents);
      unackedEvents = 0;
    }
    Native.checkReturn(closeFunction(), Ibverbs.destroyCq(cq));
    context.unregisterCq(id);
    if (channel != null) {
      channel.releaseLease();
    }
  }

  @Override
  protected String closeFunction() {
    return "ibv_destroy_cq";
  }

  /** An immutable open-addressing map from QP number to QP (linear probing); lookups allocate nothing. */
  static final class QpTable {
    static final QpTable EMPTY = new QpTable(new int[1], new NativeQueuePair[1], 0);

    private final int[] numbers;
    private final @Nullable NativeQueuePair[] pairs;
    final int size;

    private QpTable(int[] numbers, @Nullable NativeQueuePair[] pairs, int size) {
      this.numbers = numbers;
      this.pairs = pairs;
      this.size = size;
    }

    @Nullable NativeQueuePair get(int qpNumber) {
      int mask = pairs.length - 1;
      for (int i = slot(qpNumber, mask); ; i = (i + 1) & mask) {
        NativeQueuePair p = pairs[i];
        if (p == null || numbers[i] == qpNumber) {
          return p;
        }
      }
    }

    QpTable with(NativeQueuePair qp) {
      return rebuild(qp, null);
    }

    QpTable without(NativeQueuePair qp) {
      return rebuild(null, qp);
    }

    private QpTable rebuild(@Nullable NativeQueuePair add, @Nullable NativeQueuePair remove) {
      int capacity = Integer.highestOneBit(Math.max(1, 2 * (size + 1)) - 1) << 1; // load factor <= 1/2
      int[] n = new int[capacity];
      NativeQueuePair[] p = new NativeQueuePair[capacity];
      int count = 0;
      for (NativeQueuePair q : pairs) {
        if (q != null && q != remove && (add == null || q.qpNumber() != add.qpNumber())) {
          count += put(n, p, q);
        }
      }
      if (add != null) {
        count += put(n, p, add);
      }
      return new QpTable(n, p, count);
    }

    private static int put(int[] numbers, NativeQueuePair[] pairs, NativeQueuePair qp) {
      int mask = pairs.length - 1;
      int i = slot(qp.qpNumber(), mask);
      while (pairs[i] != null) {
        i = (i + 1) & mask;
      }
      numbers[i] = qp.qpNumber();
      pairs[i] = qp;
      return 1;
    }

    private static int slot(int qpNumber, int mask) {
      int h = qpNumber * 0x9E3779B9;
      return (h ^ h >>> 16) & mask;
    }
  }

  /** Flyweight over one struct ibv_wc of the array. */
  private final class View implements WorkCompletionView {
    long base;

    @Override
    public long wrId() {
      return wcs.get(JAVA_LONG, base + WC_WR_ID);
    }

    @Override
    public WorkCompletion.Status status() {
      return WorkCompletion.Status.of(wcs.get(JAVA_INT, base + WC_STATUS));
    }

    @Override
    public WorkCompletion.Opcode opcode() {
      return WorkCompletion.Opcode.of(wcs.get(JAVA_INT, base + WC_OPCODE));
    }

    @Override
    public int vendorError() {
      return wcs.get(JAVA_INT, base + WC_VENDOR_ERR);
    }

    @Override
    public int byteLength() {
      return wcs.get(JAVA_INT, base + WC_BYTE_LEN);
    }

    @Override
    public int immediateData() {
      return wcs.get(BE32, base + WC_IMM_DATA); // __be32 on the wire and in the wc
    }

    @Override
    public boolean hasImmediate() {
      return (wcs.get(JAVA_INT, base + WC_WC_FLAGS) & IBV_WC_WITH_IMM) != 0;
    }

    @Override
    public int qpNumber() {
      return wcs.get(JAVA_INT, base + WC_QP_NUM);
    }

    @Override
    public int sourceQp() {
      return wcs.get(JAVA_INT, base + WC_SRC_QP);
    }
  }

  @Override
  public Flux<WorkCompletion> completions(CompletionStreamOptions options) {
    return CompletionStreams.completions(this, options);
  }
}
