package io.rdmareactive.benchmarks.jmh;

import io.rdmareactive.rdma.verbs.IdleStrategy;
import io.rdmareactive.rdma.verbs.CompletionStreamOptions;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The completion stream's own cost per item, over a {@link SyntheticCompletionQueue} that
 * allocates nothing (busy-poll mode): what is left is the stream's (the {@code WorkCompletion}
 * record each public item is, and any bookkeeping).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class SyntheticFluxBenchmark {
  static final int BATCH = 32;

  private final SyntheticCompletionQueue cq = new SyntheticCompletionQueue();
  private final CompletionFluxBenchmark.Sink sink = new CompletionFluxBenchmark.Sink();
  private long expected;

  @Setup(Level.Trial)
  public void setUp() {
    cq.completions(CompletionStreamOptions.defaults().withMode(CompletionStreamOptions.Mode.BUSY_POLL)
        .withIdleStrategy(IdleStrategy.yielding())).subscribe(sink);
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    sink.s.cancel();
    cq.close();
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public long publicFlux() {
    cq.add(BATCH);
    expected += BATCH;
    while (sink.seen < expected) {
      Thread.onSpinWait();
    }
    return sink.bytes;
  }
}
