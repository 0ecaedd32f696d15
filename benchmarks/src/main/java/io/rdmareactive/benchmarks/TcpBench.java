package io.rdmareactive.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.netty.Connection;
import reactor.netty.DisposableServer;
import reactor.netty.resources.LoopResources;
import reactor.netty.tcp.TcpClient;
import reactor.netty.tcp.TcpServer;

/**
 * Reactor Netty TCP, the alternative users would pick instead: ping-pong latency and one-way
 * streaming over the same address the RDMA figures use. Everything runs on Netty's event loops
 * (no thread hops), as the RDMA side runs on its completion loop.
 */
final class TcpBench implements EndToEnd.Bench {
  /**
   * The first ping leaves from the caller's thread and the reply's next ping from the receiving
   * thread; when a reply is fast enough they overlap, and a unicast sink refuses the second emission
   * (FAIL_NON_SERIALIZED), which would drop a ping and stall the exchange: retry instead.
   */
  private static final reactor.core.publisher.Sinks.EmitFailureHandler RETRY_NON_SERIALIZED =
      (signal, result) -> result == reactor.core.publisher.Sinks.EmitResult.FAIL_NON_SERIALIZED;

  private final String host;
  /**
   * One event loop thread per side, as the RDMA runs have one completion thread per connection:
   * on the shared default loops client and server sometimes landed on the same thread (a ping-pong
   * without a wakeup) and sometimes not, and the 8 B latency came out 76 us in one run, 165 in the next.
   */
  private final LoopResources serverLoop = LoopResources.create("bench-tcp-server", 1, true);
  private final LoopResources clientLoop = LoopResources.create("bench-tcp-client", 1, true);

  TcpBench(String host) {
    this.host = host;
  }

  @Override
  public String name() {
    return "reactor-netty-tcp";
  }

  /** Round-trip samples (ns) of {@code size}-byte ping-pongs, after {@code warmup} unrecorded ones. */
  @Override
  public Percentiles pingPong(int size, int warmup, int iterations) {
    DisposableServer server = TcpServer.create().runOn(serverLoop).host(host).port(0)
        .handle((in, out) -> out.send(in.receive().retain())) // echo every chunk as it comes
        .bindNow();
    try {
      Connection conn = TcpClient.create().runOn(clientLoop).host(host).port(server.port()).connectNow();
      try {
        long[] samples = new long[iterations];
        int total = warmup + iterations;
        Sinks.Many<ByteBuf> sends = Sinks.many().unicast().onBackpressureBuffer();
        byte[] payload = new byte[size];
        long[] state = new long[3]; // [0] bytes received this round, [1] round, [2] start ns
        Mono<Void> done = conn.inbound().receive().handle((ByteBuf buf, reactor.core.publisher.SynchronousSink<Void> sink) -> {
          state[0] += buf.readableBytes();
          if (state[0] >= size) {
            long now = System.nanoTime();
            int round = (int) state[1];
            if (round >= warmup) {
              samples[round - warmup] = now - state[2];
            }
            state[0] -= size;
            state[1]++;
            if (state[1] == total) {
              sink.complete();
              return;
            }
            state[2] = System.nanoTime();
            sends.emitNext(Unpooled.wrappedBuffer(payload), RETRY_NON_SERIALIZED);
          }
        }).then();
        conn.outbound().send(sends.asFlux()).then().subscribe();
        state[2] = System.nanoTime();
        sends.emitNext(Unpooled.wrappedBuffer(payload), RETRY_NON_SERIALIZED);
        done.block(Duration.ofMinutes(5));
        return new Percentiles(samples, iterations);
      } finally {
        conn.disposeNow();
      }
    } finally {
      server.disposeNow();
    }
  }

  /** Streams {@code count} messages of {@code size} bytes one way; returns MB/s (10^6 bytes) and messages/s. */
  @Override
  public double[] stream(int size, int count) {
    long expected = (long) size * count;
    AtomicLong received = new AtomicLong();
    Sinks.One<Long> finished = Sinks.one();
    DisposableServer server = TcpServer.create().runOn(serverLoop).host(host).port(0)
        .handle((in, out) -> in.receive().doOnNext(b -> {
          if (received.addAndGet(b.readableBytes()) >= expected) {
            finished.tryEmitValue(System.nanoTime());
          }
        }).then())
        .bindNow();
    try {
      Connection conn = TcpClient.create().runOn(clientLoop).host(host).port(server.port()).connectNow();
      try {
        byte[] payload = new byte[size];
        long start = System.nanoTime();
        conn.outbound().send(Flux.range(0, count).map(i -> Unpooled.wrappedBuffer(payload)))
            .then().subscribe();
        long end = finished.asMono().block(Duration.ofMinutes(5));
        double seconds = (end - start) / 1e9;
        return new double[] {expected / seconds / 1e6, count / seconds};
      } finally {
        conn.disposeNow();
      }
    } finally {
      server.disposeNow();
    }
  }
}
