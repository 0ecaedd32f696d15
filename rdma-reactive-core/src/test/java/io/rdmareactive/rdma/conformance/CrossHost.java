package io.rdmareactive.rdma.conformance;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One test's view of the two-guest pair of {@code scripts/softroce-vm-pair}: which guest this JVM
 * runs in (the same test runs in both at once, guest a and guest b), the other guest's address,
 * barriers and values through ready files in the shared {@code RDMA_PAIR_DIR}, and faults on this
 * guest's end of the wire ({@code tc netem}, {@code ip link}). Outside a pair guest every test
 * aborts, saying why. A test that fails leaves a mark the other guest's barriers see, so that one
 * side's failure ends the other's wait at once instead of at its deadline; after each test the
 * wire is made whole again.
 */
public final class CrossHost implements BeforeEachCallback, AfterEachCallback {
  /** How long a barrier waits for the other guest by default (two JVMs under TCG on a busy host). */
  public static final Duration BARRIER = Duration.ofMinutes(5);
  private static final String DEV = "eth0";

  private final String role = System.getenv().getOrDefault("RDMA_PAIR_ROLE", "");
  private final String dir = System.getenv().getOrDefault("RDMA_PAIR_DIR", "");
  private String test = "";
  /** Barriers passed so far by name: a name used again in the same test is a new barrier. */
  private final java.util.Map<String, Integer> passed = new java.util.HashMap<>();

  @Override
  public void beforeEach(ExtensionContext context) {
    Assumptions.assumeTrue(!role.isEmpty() && !dir.isEmpty(),
        "not in a guest of scripts/softroce-vm-pair (RDMA_PAIR_ROLE and RDMA_PAIR_DIR unset)");
    test = context.getRequiredTestClass().getSimpleName() + "." + context.getRequiredTestMethod().getName();
    passed.clear();
  }

  @Override
  public void afterEach(ExtensionContext context) {
    if (role.isEmpty()) {
      return;
    }
    if (context.getExecutionException().isPresent()) {
      write(test + ".failed." + role, context.getExecutionException().get().toString());
    }
    heal();
  }

  /** Whether this JVM runs in guest a (10.0.0.1; by convention the server side). */
  public boolean isA() {
    return role.equals("a");
  }

  /** This guest's address on the wire. */
  public String self() {
    return System.getenv("RDMA_PAIR_SELF");
  }

  /** The other guest's address. */
  public String peer() {
    return System.getenv("RDMA_PAIR_PEER");
  }

  /**
   * Waits (up to {@link #BARRIER}) until the other guest reached the same {@code name} in this
   * test; the n-th use of a name meets the other guest's n-th.
   */
  public void barrier(String name) {
    barrier(name, BARRIER);
  }

  /** Waits up to {@code timeout} until the other guest reached the same {@code name} in this test. */
  public void barrier(String name, Duration timeout) {
    String nth = name + "-" + passed.merge(name, 1, Integer::sum);
    write(test + "." + nth + "." + role, "");
    await(test + "." + nth + "." + other(), timeout, "barrier '" + nth + "'");
  }

  /** Publishes {@code value} under {@code name} for the other guest's {@link #get}. */
  public void put(String name, String value) {
    write(test + ".value." + name, value);
  }

  /** The value the other guest published under {@code name}, waiting up to {@link #BARRIER} for it. */
  public String get(String name) {
    Path p = await(test + ".value." + name, BARRIER, "value '" + name + "'");
    try {
      return Files.readString(p, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Replaces the queueing discipline of this guest's egress with {@code tc netem ARGS} (loss, delay, reorder). */
  public void netem(String... args) {
    List<String> cmd = new ArrayList<>(List.of("tc", "qdisc", "replace", "dev", DEV, "root", "netem"));
    cmd.addAll(List.of(args));
    run(cmd);
  }

  /**
   * Delays this guest's egress by {@code delay} plus or minus {@code jitter}, keeping the packets
   * in order. Jitter alone reorders back-to-back packets (netem sorts by send time), and RC answers
   * every reordering with a NAK and a go-back-N whose packets are reordered again: 900 of 10^4
   * messages got through in 6 minutes. With a rate, netem sends no packet before the one queued
   * ahead of it; 1 Gbit/s adds 12 us a full frame.
   */
  public void delayInOrder(String delay, String jitter) {
    netem("delay", delay, jitter, "rate", "1gbit");
  }

  /** This guest's egress drops everything: with the other guest doing the same, a partition. */
  public void partition() {
    netem("loss", "100%");
  }

  /** Sets this guest's end of the wire down ({@code ip link set eth0 down}). */
  public void linkDown() {
    run(List.of("ip", "link", "set", DEV, "down"));
  }

  /** Removes any netem from this guest's egress (a no-op when there is none). */
  public void heal() {
    try {
      Process p = new ProcessBuilder("tc", "qdisc", "del", "dev", DEV, "root").redirectErrorStream(true).start();
      p.getInputStream().readAllBytes(); // "no qdisc" when none was set: fine
      p.waitFor(30, TimeUnit.SECONDS);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Appends a line to {@code $RDMA_VM_OUT/cross-host-figures.txt} (the measured figures the docs quote). */
  public void figure(String line) {
    String out = System.getenv().getOrDefault("RDMA_VM_OUT", dir);
    String text = "guest " + role + " " + test + ": " + line + System.lineSeparator();
    System.out.print(text);
    try {
      Files.writeString(Path.of(out, "cross-host-figures.txt"), text, StandardCharsets.UTF_8,
          java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private String other() {
    return isA() ? "b" : "a";
  }

  private Path await(String file, Duration timeout, String what) {
    Path p = Path.of(dir, file);
    Path failed = Path.of(dir, test + ".failed." + other());
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!Files.exists(p)) {
      if (Files.exists(failed)) {
        throw new AssertionError("guest " + other() + " failed " + test + " before " + what + ": " + read(failed));
      }
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("guest " + other() + " did not reach " + what + " of " + test + " within " + timeout);
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted waiting for " + what, e);
      }
    }
    return p;
  }

  private void write(String file, String text) {
    try {
      Path tmp = Files.writeString(Path.of(dir, file + ".tmp"), text, StandardCharsets.UTF_8);
      Files.move(tmp, Path.of(dir, file), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String read(Path p) {
    try {
      return Files.readString(p, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "(unreadable: " + e + ")";
    }
  }

  private static void run(List<String> cmd) {
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new AssertionError(String.join(" ", cmd) + " failed: " + out);
      }
    } catch (IOException e) {
      throw new AssertionError(String.join(" ", cmd) + " could not run (iproute2's tc/ip needed)", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
