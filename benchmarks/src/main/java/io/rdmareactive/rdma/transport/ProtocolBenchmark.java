package io.rdmareactive.rdma.transport;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * The framed protocol's header (it rides in the 32-bit immediate data): packing grants and flags
 * on send, and the receiver's validation and credit accounting on each completion. In the
 * transport's package because {@link Protocol} is package-private.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class ProtocolBenchmark {
  private int grants = 3;
  private long credits;
  private long updates;

  /** Encode, then decode as ConnectionOperations does: validate, add the grants, test MORE and CREDIT. */
  @Benchmark
  public long encodeDecode() {
    int g = grants = (grants + 1) & 63;
    int imm = Protocol.immediate(g, (g & 1) != 0, (g & 2) != 0);
    if ((imm & Protocol.RESERVED_MASK) != 0) {
      throw new IllegalStateException();
    }
    credits += imm & Protocol.GRANT_MASK;
    if ((imm & Protocol.CREDIT) != 0) {
      updates++;
    }
    return credits + ((imm & Protocol.MORE) != 0 ? 1 : 0) + updates;
  }

  /** The connection handshake's private data; once per connection, not on the hot path. */
  @Benchmark
  public Protocol.Hello helloRoundTrip() {
    return Protocol.Hello.decode(new Protocol.Hello(16384, 64, 16 << 20).encode());
  }
}
