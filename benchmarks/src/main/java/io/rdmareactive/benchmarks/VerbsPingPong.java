package io.rdmareactive.benchmarks;

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
import io.rdmareactive.rdma.verbs.WorkCompletion;
import io.rdmareactive.rdma.verbs.WorkCompletionHandler;
import io.rdmareactive.rdma.verbs.WorkCompletionView;
import java.lang.foreign.Arena;
import java.util.Arrays;
import java.util.Locale;

/**
 * The floor under {@link LatencyProbe}: an 8 B ping-pong on the verbs API alone, with no
 * transport. Two RC queue pairs in one JVM, each on its own completion queue and spinning thread.
 * The pinger posts a SEND and spins until the reply's receive completion, then reposts its
 * receive. The echo spins until a receive, reposts it and posts a SEND. The flyweights are reused,
 * so nothing is allocated. It is what any JVM program pays to drive the device through FFM, so
 * the transport's own share is the probe's p50 minus this one (scripts/latency-breakdown,
 * {@code LB_PARTS=verbs}). One clock read per round trip (the pinger's), as perftest.
 *
 * <pre>VerbsPingPong [--device rxe0] [--gid-index 1] [--iterations 20000] [--trials 5]</pre>
 * prints each trial's p50 one way and {@code p50_one_way_us} (the median of the trials' p50s),
 * after three trials of warm-up.
 */
final class VerbsPingPong {
  private static final int SIZE = 8;

  private VerbsPingPong() {}

  /** Counts receive and send completions; any failure ends the run. */
  private static final class Counts implements WorkCompletionHandler {
    int receives;

    @Override
    public void onCompletion(WorkCompletionView c) {
      if (c.status() != WorkCompletion.Status.SUCCESS) {
        throw new IllegalStateException("work request " + c.wrId() + " completed with " + c.status());
      }
      if (c.opcode() == WorkCompletion.Opcode.RECV) {
        receives++;
      }
    }

    void awaitReceive(CompletionQueue cq) {
      int want = receives + 1;
      while (receives < want) {
        cq.poll(4, this);
      }
    }
  }

  public static void main(String[] args) throws InterruptedException {
    String device = "rxe0";
    int gidIndex = 1;
    int iterations = 20_000;
    int trials = 5;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--device" -> device = args[++i];
        case "--gid-index" -> gidIndex = Integer.parseInt(args[++i]);
        case "--iterations" -> iterations = Integer.parseInt(args[++i]);
        case "--trials" -> trials = Integer.parseInt(args[++i]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    try (RdmaContext context = RdmaDevices.provider("native").open(device);
        ProtectionDomain pd = context.allocateProtectionDomain();
        CompletionQueue pingCq = context.createCompletionQueue(64, null);
        CompletionQueue echoCq = context.createCompletionQueue(64, null);
        Arena arena = Arena.ofShared()) {
      MemoryRegion mr = pd.registerMemory(arena.allocate(4096, 4096), Access.local());
      try (mr;
          QueuePair ping = pd.createQueuePair(QueuePairOptions.reliable(pingCq, 16));
          QueuePair echo = pd.createQueuePair(QueuePairOptions.reliable(echoCq, 16))) {
        QueuePairConnectOptions connect = QueuePairConnectOptions.defaults().withGidIndex(gidIndex);
        ping.connect(echo.localAddress(connect), connect);
        echo.connect(ping.localAddress(connect), connect);
        run(ping, pingCq, echo, echoCq, mr, iterations, trials);
      }
    }
  }

  private static void run(QueuePair ping, CompletionQueue pingCq, QueuePair echo, CompletionQueue echoCq,
      MemoryRegion mr, int iterations, int trials) throws InterruptedException {
    int warmup = 3;
    long total = (long) iterations * (warmup + trials);
    Thread echoThread = new Thread(() -> {
      ReceiveRequest receive = new ReceiveRequest();
      SendRequest send = new SendRequest();
      Counts counts = new Counts();
      echo.postReceive(receive.set(1, mr, 2048, SIZE));
      for (long i = 0; i < total; i++) {
        counts.awaitReceive(echoCq);
        echo.postReceive(receive.set(1, mr, 2048, SIZE));
        echo.postSend(send.send(2, mr, 1024, SIZE));
      }
    }, "verbs-echo");
    // A failed echo would leave the pinger spinning: end the run, saying why; a failed pinger ends
    // main, and the daemon echo with it.
    echoThread.setDaemon(true);
    echoThread.setUncaughtExceptionHandler((t, e) -> {
      e.printStackTrace();
      Runtime.getRuntime().halt(1);
    });
    ReceiveRequest receive = new ReceiveRequest();
    SendRequest send = new SendRequest();
    Counts counts = new Counts();
    ping.postReceive(receive.set(1, mr, 512, SIZE));
    echoThread.start();
    long[] samples = new long[iterations];
    double[] p50 = new double[trials];
    for (int t = -warmup; t < trials; t++) {
      long previous = System.nanoTime();
      for (int i = 0; i < iterations; i++) {
        ping.postSend(send.send(2, mr, 0, SIZE));
        counts.awaitReceive(pingCq);
        ping.postReceive(receive.set(1, mr, 512, SIZE));
        long now = System.nanoTime();
        samples[i] = now - previous;
        previous = now;
      }
      if (t >= 0) {
        Arrays.sort(samples);
        p50[t] = samples[iterations / 2] / 2000.0;
        System.out.printf(Locale.ROOT, "trial %d p50_one_way_us %.2f%n", t, p50[t]);
      }
    }
    echoThread.join();
    Arrays.sort(p50);
    System.out.printf(Locale.ROOT, "p50_one_way_us %.2f%n", p50[trials / 2]);
  }
}
