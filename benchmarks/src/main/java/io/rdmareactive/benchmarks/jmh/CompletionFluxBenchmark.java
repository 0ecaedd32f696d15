package io.rdmareactive.benchmarks.jmh;

import io.rdmareactive.rdma.device.RdmaDevices;
import io.rdmareactive.rdma.verbs.IdleStrategy;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.CompletionStreamOptions;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.QueuePairConnectOptions;
import io.rdmareactive.rdma.verbs.QueuePairOptions;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.SendRequest;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import java.lang.foreign.Arena;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;

/**
 * The public completion Flux, per item: {@value #BATCH} signaled RDMA writes are posted, then the
 * benchmark thread waits until the stream's subscriber (on the stream's own thread: the event loop
 * or the busy-poll thread) has seen them all. Every item is a {@link WorkCompletion} record copied
 * out of the provider's view, which is the API's contract (a subscriber may keep it).
 *
 * <p>The in-memory provider allocates per work request itself ({@link VerbsBenchmark});
 * {@link SyntheticFluxBenchmark} measures the stream alone.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class CompletionFluxBenchmark {
  static final int BATCH = 32;

  @Param({"BUSY_POLL", "EVENT"})
  public CompletionStreamOptions.Mode mode;
  @Param("in-memory")
  public String provider;
  @Param("mem0")
  public String device;
  @Param("0")
  public int gidIndex;

  private RdmaContext context;
  private ProtectionDomain pd;
  private CompletionChannel channel;
  private CompletionQueue cq;
  private Arena arena;
  private MemoryRegion mr;
  private QueuePair a;
  private QueuePair b;
  private final SendRequest send = new SendRequest();
  private final Sink sink = new Sink();
  private long posted;

  /** Counts items and requests in batches, as an operator with prefetch would. */
  static final class Sink implements CoreSubscriber<WorkCompletion> {
    volatile long seen;
    long bytes;
    Subscription s;

    @Override
    public void onSubscribe(Subscription s) {
      this.s = s;
      s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(WorkCompletion wc) {
      bytes += wc.byteLength();
      seen = seen + 1; // one producer thread
    }

    @Override
    public void onError(Throwable t) {
      t.printStackTrace();
    }

    @Override
    public void onComplete() {}
  }

  @Setup(Level.Trial)
  public void setUp() {
    context = RdmaDevices.provider(provider).open(device);
    pd = context.allocateProtectionDomain();
    channel = context.createCompletionChannel();
    cq = context.createCompletionQueue(4 * BATCH, channel);
    arena = Arena.ofShared();
    mr = pd.registerMemory(arena.allocate(4096, 4096), Access.remote());
    a = pd.createQueuePair(QueuePairOptions.reliable(cq, BATCH));
    b = pd.createQueuePair(QueuePairOptions.reliable(cq, BATCH));
    QueuePairConnectOptions connect = QueuePairConnectOptions.defaults().withGidIndex(gidIndex);
    a.connect(b.localAddress(connect), connect);
    b.connect(a.localAddress(connect), connect);
    cq.completions(CompletionStreamOptions.defaults().withMode(mode).withIdleStrategy(IdleStrategy.yielding()))
        .subscribe(sink);
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    sink.s.cancel();
    a.close();
    b.close();
    mr.close();
    cq.close();
    channel.close();
    pd.close();
    context.close();
    arena.close();
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public long writesThroughFlux() {
    for (int i = 0; i < BATCH; i++) {
      a.postSend(send.write(i, mr, 0, 8, mr.address() + 64, mr.remoteKey()));
    }
    posted += BATCH;
    while (sink.seen < posted) {
      Thread.onSpinWait();
    }
    return sink.bytes;
  }
}
