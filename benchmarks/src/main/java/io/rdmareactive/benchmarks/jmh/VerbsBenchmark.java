package io.rdmareactive.benchmarks.jmh;

import io.rdmareactive.rdma.device.RdmaDevices;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.QueuePairConnectOptions;
import io.rdmareactive.rdma.verbs.QueuePairOptions;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.ReceiveRequest;
import io.rdmareactive.rdma.verbs.SendRequest;
import io.rdmareactive.rdma.verbs.WorkCompletionHandler;
import io.rdmareactive.rdma.verbs.WorkCompletionView;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The verbs flyweights: one SEND from QP a to QP b with its receive posted first, then both
 * completions polled with one reused handler (no completion stream). On {@code in-memory} this
 * measures that provider (which keeps each completion as an object, by design); on {@code native}
 * (needs a device: run in the Soft-RoCE VM with {@code -p provider=native -p device=rxe0
 * -p gidIndex=1}) it measures the FFM post/poll path, which must not allocate.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class VerbsBenchmark {
  @Param("in-memory")
  public String provider;
  @Param("mem0")
  public String device;
  @Param("0")
  public int gidIndex;
  @Param("64")
  public int size;

  private RdmaContext context;
  private ProtectionDomain pd;
  private CompletionQueue cq;
  private Arena arena;
  private MemoryRegion mr;
  private QueuePair a;
  private QueuePair b;
  private final SendRequest send = new SendRequest();
  private final ReceiveRequest receive = new ReceiveRequest();
  private final Counter counter = new Counter();

  /** The reused handler: reads the view's fields as a consumer would. */
  static final class Counter implements WorkCompletionHandler {
    long bytes;
    long ids;

    @Override
    public void onCompletion(WorkCompletionView c) {
      bytes += c.byteLength();
      ids += c.wrId() + c.status().ordinal() + c.opcode().ordinal();
    }
  }

  @Setup(Level.Trial)
  public void setUp() {
    context = RdmaDevices.provider(provider).open(device);
    pd = context.allocateProtectionDomain();
    cq = context.createCompletionQueue(64, null);
    arena = Arena.ofShared();
    MemorySegment memory = arena.allocate(2L * Math.max(size, 64), 4096);
    mr = pd.registerMemory(memory, Access.local());
    a = pd.createQueuePair(QueuePairOptions.reliable(cq, 16));
    b = pd.createQueuePair(QueuePairOptions.reliable(cq, 16));
    QueuePairConnectOptions connect = QueuePairConnectOptions.defaults().withGidIndex(gidIndex);
    a.connect(b.localAddress(connect), connect);
    b.connect(a.localAddress(connect), connect);
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    a.close();
    b.close();
    mr.close();
    cq.close();
    pd.close();
    context.close();
    arena.close();
  }

  /** postReceive + postSend + poll until both completions came: two WRs, two completions. */
  @Benchmark
  public long sendReceivePoll() {
    b.postReceive(receive.set(1, mr, size, size));
    a.postSend(send.send(2, mr, 0, size));
    int seen = 0;
    while (seen < 2) {
      seen += cq.poll(4, counter);
    }
    return counter.bytes;
  }

  /** An empty poll: what a busy-polling thread does between completions. */
  @Benchmark
  public int emptyPoll() {
    return cq.poll(32, counter);
  }
}
