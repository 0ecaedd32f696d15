package io.rdmareactive.benchmarks;

import io.rdmareactive.rdma.device.RdmaDevices;
import io.rdmareactive.rdma.spi.RdmaProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;

/**
 * The end-to-end run: on one device, perftest (ib_send_lat, ib_send_bw, ib_write_bw, ib_read_bw), this
 * library and Reactor Netty TCP, each on the same metrics; writes results.md, results.csv and
 * results.png.
 *
 * <pre>EndToEnd [--device rxe0] [--address 10.0.0.1] [--gid-index 1] [--out DIR] [--quick]
 *          [--provider auto|native|in-memory] [--only rdma|rsocket]
 *          [--phase perftest|rdma-event|rdma-busy-poll|tcp|rsocket-rdma|rsocket-tcp [--reading N] | --report]</pre>
 *
 * Without {@code --phase} every phase runs in this JVM, then the report. With {@code --phase P}
 * only that phase runs and its figures go to {@code OUT/figures-P.csv} (written when the phase
 * ends, so a JVM that dies mid-phase leaves none behind and the phase can simply run again);
 * {@code --report} then reads every {@code figures-*.csv} in OUT. scripts/benchmark runs each
 * phase in its own JVM that way: under multi-threaded TCG a JVM occasionally crashes, and a
 * rerun of one phase is cheaper than a rerun of everything. {@code --phase perftest --reading N}
 * (N &ge; 2) is one more perftest reading, between later phases ({@link Readings}).
 *
 * <p>Latency is one way (half the round trip), as ib_send_lat reports it. This library runs in
 * two modes, "rdma-reactive (event)" and "rdma-reactive (busy-poll)", on the native provider
 * when it can establish connections here ({@code auto}), else on the in-memory one (then the
 * header says so: those figures are not RDMA). RSocket runs over this library (event mode) and
 * over rsocket-transport-netty's TCP ({@link RSocketBench}): request-response for the latency
 * rows, request-stream for the throughput and rate rows.
 */
public final class EndToEnd {
  static final List<String> PHASES = List.of("perftest", "rdma-event", "rdma-busy-poll", "tcp", "rsocket-rdma",
      "rsocket-tcp");

  private EndToEnd() {}

  private static boolean nativeConnections() {
    try {
      RdmaProvider p = RdmaDevices.provider("native");
      p.connections();
      return p.isAvailable();
    } catch (RuntimeException | LinkageError unavailable) {
      System.out.println("native provider unusable here (" + unavailable + "); using in-memory");
      return false;
    }
  }

  private static void progress(String phase, long t0) {
    System.out.printf(Locale.ROOT, "  -- %s: %.0f s elapsed%n", phase, (System.nanoTime() - t0) / 1e9);
  }

  public static void main(String[] args) throws Exception {
    String device = "rxe0", address = "10.0.0.1";
    int gidIndex = 1;
    Path out = Path.of("benchmarks/target/e2e");
    boolean quick = false;
    String provider = "auto";
    String only = null; // a phase-name prefix: rdma (this library's phases) or rsocket
    String phase = null;
    boolean reportOnly = false;
    int reading = 1; // perftest's reading in this run (scripts/lib/benchmark-guest runs it between phases)
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--device" -> device = args[++i];
        case "--address" -> address = args[++i];
        case "--gid-index" -> gidIndex = Integer.parseInt(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        case "--quick" -> quick = true;
        case "--provider" -> provider = args[++i];
        case "--only" -> only = args[++i];
        case "--phase" -> phase = args[++i];
        case "--report" -> reportOnly = true;
        case "--reading" -> reading = Integer.parseInt(args[++i]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]
            + " (usage: EndToEnd [--device D] [--address A] [--gid-index N] [--out DIR] [--quick]"
            + " [--provider auto|native|in-memory] [--only rdma|rsocket] [--phase " + String.join("|", PHASES)
            + " [--reading N] | --report])");
      }
    }
    if (only != null && !only.equals("rdma") && !only.equals("rsocket")) {
      throw new IllegalArgumentException("--only takes rdma or rsocket, not " + only);
    }
    if (phase != null && !PHASES.contains(phase)) {
      throw new IllegalArgumentException("unknown phase " + phase + "; phases: " + PHASES);
    }
    Files.createDirectories(out);
    if ("auto".equals(provider)) {
      provider = nativeConnections() ? "native" : "in-memory";
    }
    Sizes sizes = new Sizes(quick);
    long t0 = System.nanoTime();
    if (reportOnly) {
      report(out, device, address, provider, quick, null, t0);
      return;
    }
    if (phase != null) {
      Report figures = new Report();
      run(phase, figures, new Settings(device, address, gidIndex, provider, out, reading), sizes, t0);
      String name = phase.equals(Report.REFERENCE) ? Readings.phaseName(reading) : phase;
      figures.writeFigures(out.resolve("figures-" + name + ".csv"));
      Readings.ended(out, name);
      return;
    }
    // Everything in this JVM: each phase's figures as it ends, then the report over all of them.
    Report.previous(out);
    Exception failed = null;
    for (String p : PHASES) {
      if (only != null && !p.startsWith(only)) {
        continue;
      }
      Report figures = new Report();
      try {
        run(p, figures, new Settings(device, address, gidIndex, provider, out, 1), sizes, t0);
      } catch (Exception e) {
        System.out.println("phase " + p + " failed; the report keeps the other phases' figures");
        e.printStackTrace(System.out);
        failed = e;
      }
      figures.writeFigures(out.resolve("figures-" + p + ".csv"));
      Readings.ended(out, p);
    }
    report(out, device, address, provider, quick, failed, t0);
    if (failed != null) {
      System.exit(1);
    }
  }

  private static void report(Path out, String device, String address, String provider, boolean quick,
      Exception failed, long t0) throws IOException {
    Report report = Report.readFigures(out);
    Path reruns = out.resolve("reruns.txt"); // written by scripts/lib/benchmark-guest
    // Every phase, and every perftest reading the guest script planned (expected.txt): a lost
    // reading leaves its neighbours read against one side only, so the run is not published.
    java.util.Set<String> planned = new java.util.LinkedHashSet<>(PHASES);
    Path expected = out.resolve("expected.txt");
    if (Files.exists(expected)) {
      Files.readAllLines(expected).stream().map(String::strip).filter(p -> !p.isEmpty()).forEach(planned::add);
    }
    List<String> missing = planned.stream().filter(p -> !Files.exists(out.resolve("figures-" + p + ".csv"))).toList();
    String header = "End-to-end run of " + LocalDateTime.now().format(DateTimeFormatter.ISO_LOCAL_DATE_TIME)
        + " on " + device + " (" + address + "), " + Runtime.getRuntime().availableProcessors() + " CPUs, Java "
        + Runtime.version() + (System.getenv("RDMA_VM") != null && !"0".equals(System.getenv("RDMA_VM"))
            ? ", inside the Soft-RoCE VM (QEMU TCG)" : "") + clocksource() + "; rdma-reactive on the " + provider + " provider"
        + ("in-memory".equals(provider) ? " (NOT RDMA: the native provider cannot connect here)" : "")
        + "; " + (quick ? "quick run" : "full run")
        + (missing.isEmpty() ? "" : " (INCOMPLETE: no figures from " + String.join(", ", missing) + ")")
        + (failed != null ? " (a phase failed: " + failed + ")" : "")
        + (Files.exists(reruns) ? "; phases run again: " + String.join("; ", Files.readAllLines(reruns)) : "");
    report.write(out, header);
    System.out.println();
    System.out.println(Files.readString(out.resolve("results.md")));
    System.out.println("wrote " + out.resolve("results.md") + ", results.csv, results.png");
  }

  /**
   * How much to measure. Every figure is the median of {@code trials} runs; perftest runs take
   * its own iteration counts, the JVM runs are sized from a probe to last about
   * {@code trialSeconds} each (a fixed count made some runs last 60 ms and their figures noise).
   */
  record Sizes(int trials, int latIters, int bwIters, int jvmLatIters, int jvmBwIters, double trialSeconds) {
    Sizes(boolean quick) {
      this(quick ? 1 : 3, quick ? 2_000 : 10_000, quick ? 2_000 : 10_000, quick ? 1_000 : 3_000,
          quick ? 1_000 : 4_000, quick ? 0.3 : 1.0);
    }
  }

  /** The median of {@code trials} runs of {@code run}, column by column. */
  static double[] median(int trials, Trial run) throws Exception {
    double[][] results = new double[trials][];
    for (int t = 0; t < trials; t++) {
      results[t] = run.get();
    }
    double[] m = new double[results[0].length];
    for (int c = 0; c < m.length; c++) {
      double[] col = new double[trials];
      for (int t = 0; t < trials; t++) {
        col[t] = c < results[t].length ? results[t][c] : Double.NaN;
      }
      java.util.Arrays.sort(col); // NaN sorts last: a failed perftest run does not become the median of finite ones
      int finite = 0;
      for (double d : col) {
        finite += Double.isNaN(d) ? 0 : 1;
      }
      m[c] = finite == 0 ? Double.NaN : col[(finite - 1) / 2];
    }
    return m;
  }

  interface Trial {
    double[] get() throws Exception;
  }

  /** Where and how a phase runs; {@code reading}: which of perftest's readings a perftest phase is (1 first). */
  record Settings(String device, String address, int gidIndex, String provider, Path out, int reading) {}

  static final int[] LATENCY_SIZES = {8, 4096};
  static final int[] STREAM_SIZES = {4096, 65536};
  static final int RATE_SIZE = 64;
  /** The row of the default options (16 KiB buffers): a 64 KiB message as four fragments. */
  static final int DEFAULTS_SIZE = 65536;
  static final String DEFAULTS_METRIC = "throughput 64 KiB, default options";
  /** The 64 KiB stream sent from registered memory, with no copy (64 KiB buffers, as the plain row). */
  static final String ZERO_COPY_METRIC = "throughput 64 KiB, from registered memory";
  /** Bytes both sides' transports copied per message of that stream, where the system counts them. */
  static final String ZERO_COPY_COPIED = "bytes copied per message 64 KiB, from registered memory";
  /** The 1 MiB stream from registered memory, by rendezvous: the receiver pulls each message by RDMA READ (default options). */
  static final int RENDEZVOUS_SIZE = 1 << 20;
  static final String RENDEZVOUS_METRIC = "throughput 1 MiB, rendezvous from registered memory";
  /** Bytes both sides' transports copied per message of the rendezvous stream. */
  static final String RENDEZVOUS_COPIED = "bytes copied per message 1 MiB, rendezvous";
  /** Completions polled per message of the 64 B stream, from the connections' statistics. */
  static final String SENDER_COMPLETIONS = "completions per message 64 B, sender";
  static final String RECEIVER_COMPLETIONS = "completions per message 64 B, receiver";

  static String label(int size) {
    return size >= 1024 ? size / 1024 + " KiB" : size + " B";
  }

  private static void run(String phase, Report report, Settings s, Sizes n, long t0) throws Exception {
    switch (phase) {
      case "perftest" -> Perftest.measure(report, s, n);
      case "rdma-event" -> jvm(report, new RdmaBench(s.address(), s.provider(), false), n);
      case "rdma-busy-poll" -> jvm(report, new RdmaBench(s.address(), s.provider(), true), n);
      case "tcp" -> jvm(report, new TcpBench(s.address()), n);
      case "rsocket-rdma" -> jvm(report, RSocketBench.rdma(s.address(), s.provider()), n);
      case "rsocket-tcp" -> jvm(report, RSocketBench.tcp(s.address()), n);
      default -> throw new IllegalArgumentException(phase);
    }
    progress(phase, t0);
  }

  /**
   * A JVM system: warmed up until the JIT is done with the hot path, then each metric after an
   * unrecorded run. Under TCG, C2 compiles take seconds and compete with the benchmark for the
   * two vCPUs: a fixed warm-up measured compilation (the first metric came out 2x slower than the
   * later ones), so rounds repeat until a whole round adds almost no compilation time (at most 12).
   */
  private static void jvm(Report report, Bench b, Sizes n) throws Exception {
    var jit = java.lang.management.ManagementFactory.getCompilationMXBean();
    long compiled = -1;
    for (int round = 1; round <= 12; round++) {
      b.pingPong(8, n.jvmLatIters() / 2, n.jvmLatIters() / 2);
      b.pingPong(4096, 0, n.jvmLatIters() / 4);
      b.stream(4096, n.jvmBwIters() / 2);
      b.stream(RATE_SIZE, n.jvmBwIters() / 2);
      b.warmUpLargeMessages();
      Thread.sleep(1_000); // let queued compilations finish before looking
      long now = jit.getTotalCompilationTime();
      System.out.printf(Locale.ROOT, "  warm-up round %d: JIT time %d ms%n", round, now);
      if (compiled >= 0 && now - compiled <= Math.max(50, now / 50)) {
        break; // JIT quiet: under 2% (or 50 ms) more in a whole round
      }
      compiled = now;
    }
    for (int size : LATENCY_SIZES) {
      Percentiles probe = b.pingPong(size, 100, 500);
      int iters = sized(n.trialSeconds() / (2 * probe.micros(50) / 1e6), n.jvmLatIters() / 3, 200_000);
      double[] lat = median(n.trials(), () -> {
        Percentiles p = b.pingPong(size, iters / 10, iters);
        return new double[] {p.micros(50) / 2, p.micros(99) / 2};
      });
      report.add(new Figure("latency p50 " + label(size), b.name(), lat[0], "us", false));
      report.add(new Figure("latency p99 " + label(size), b.name(), lat[1], "us", false));
    }
    for (int size : STREAM_SIZES) {
      report.add(new Figure("throughput " + label(size), b.name(), stream(b, size, n)[0], "MB/s", true));
    }
    double[] rate = stream(b, RATE_SIZE, n);
    report.add(new Figure("message rate " + label(RATE_SIZE), b.name(), rate[1] / 1e6, "Mmsg/s", true));
    if (rate.length >= 4) {
      report.add(new Figure(SENDER_COMPLETIONS, b.name(), rate[2], "per msg", false));
      report.add(new Figure(RECEIVER_COMPLETIONS, b.name(), rate[3], "per msg", false));
    }
    double[] probe = b.streamWithDefaults(DEFAULTS_SIZE, 250);
    if (probe != null) {
      int count = sized(n.trialSeconds() * probe[1], 250, 5_000_000);
      double[] defaults = median(n.trials(), () -> b.streamWithDefaults(DEFAULTS_SIZE, count));
      report.add(new Figure(DEFAULTS_METRIC, b.name(), defaults[0], "MB/s", true));
    }
    double[] zeroCopyProbe = b.streamFromRegisteredMemory(DEFAULTS_SIZE, 250);
    if (zeroCopyProbe != null) {
      int count = sized(n.trialSeconds() * zeroCopyProbe[1], 250, 5_000_000);
      double[] zeroCopy = median(n.trials(), () -> b.streamFromRegisteredMemory(DEFAULTS_SIZE, count));
      report.add(new Figure(ZERO_COPY_METRIC, b.name(), zeroCopy[0], "MB/s", true));
      if (zeroCopy.length >= 3) { // what both sides' transports copied: 0 on this path
        report.add(new Figure(ZERO_COPY_COPIED, b.name(), zeroCopy[2], "B/msg", false));
      }
    }
    double[] rendezvousProbe = b.streamByRendezvous(RENDEZVOUS_SIZE, 20);
    if (rendezvousProbe != null) {
      int count = sized(n.trialSeconds() * rendezvousProbe[1], 20, 100_000);
      double[] rendezvous = median(n.trials(), () -> b.streamByRendezvous(RENDEZVOUS_SIZE, count));
      report.add(new Figure(RENDEZVOUS_METRIC, b.name(), rendezvous[0], "MB/s", true));
      if (rendezvous.length >= 3) { // nothing copied here either: the receiver READs into pooled memory
        report.add(new Figure(RENDEZVOUS_COPIED, b.name(), rendezvous[2], "B/msg", false));
      }
    }
  }

  /** The median of {@code trials} one-way streams, each sized from a probe to last about {@code trialSeconds}. */
  private static double[] stream(Bench b, int size, Sizes n) throws Exception {
    double[] probe = b.stream(size, size >= 65536 ? 250 : 2_000);
    int count = sized(n.trialSeconds() * probe[1], size >= 65536 ? 250 : 1_000, 5_000_000);
    return median(n.trials(), () -> b.stream(size, count));
  }

  private static int sized(double wanted, int min, int max) {
    return (int) Math.max(min, Math.min(max, Double.isFinite(wanted) ? wanted : min));
  }

  /** What the end-to-end run asks of a JVM system. */
  interface Bench {
    String name();

    /** Round-trip samples of {@code size}-byte ping-pongs, after {@code warmup} unrecorded ones. */
    Percentiles pingPong(int size, int warmup, int iterations) throws Exception;

    /**
     * Streams {@code count} messages of {@code size} bytes one way: {MB/s (10^6 B), messages/s},
     * then, where the system counts them, completions polled per message by the sender and the receiver
     * and bytes both sides copied per message.
     */
    double[] stream(int size, int count) throws Exception;

    /**
     * Warm-up for the paths of the large-message rows that the small ping-pongs and streams do not
     * take (fragments, sends from registered memory): without it the JIT compiles them, C2 only,
     * only once those rows are being measured (under TCG seconds of compiling beside them, and
     * per-message code interpreted until then: about 15% of the guest's samples each in a perf
     * profile of a 64 KiB default-options stream after a short warm-up, session 21).
     */
    default void warmUpLargeMessages() throws Exception {}

    /** The same stream with the system's default options, or null where it has none to show. */
    default double @org.jspecify.annotations.Nullable [] streamWithDefaults(int size, int count) throws Exception {
      return null;
    }

    /**
     * A stream of messages above the rendezvous threshold from registered memory: {MB/s, messages/s,
     * bytes both sides copied per message}, or null where the system has none.
     */
    default double @org.jspecify.annotations.Nullable [] streamByRendezvous(int size, int count) throws Exception {
      return null;
    }

    /**
     * The same stream sent from memory registered once, with no copy: {MB/s, messages/s, bytes both
     * sides copied per message}, or null where the system cannot.
     */
    default double @org.jspecify.annotations.Nullable [] streamFromRegisteredMemory(int size, int count) throws Exception {
      return null;
    }
  }

  static void moveAside(Path from, Path to) throws IOException {
    if (Files.exists(from)) {
      Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
    }
  }

  /**
   * ", clock NAME": the kernel's clocksource, which sets what every System.nanoTime() costs (in
   * the VM, hpet made each one a system call; scripts/softroce-vm asks for the TSC); "" where
   * Linux does not say.
   */
  private static String clocksource() {
    try {
      return ", clock " + Files.readString(Path.of("/sys/devices/system/clocksource/clocksource0/current_clocksource")).strip();
    } catch (IOException | RuntimeException e) {
      return "";
    }
  }
}
