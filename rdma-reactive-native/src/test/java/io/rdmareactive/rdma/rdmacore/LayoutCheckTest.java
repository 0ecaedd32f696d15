package io.rdmareactive.rdma.rdmacore;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compiles src/test/c/layout_probe.c against the installed verbs.h and compares every size and
 * offset it prints with {@link VerbsLayout}: a header that moved a field fails here, not in a
 * crash. Needs gcc and libibverbs-dev; without them the test is skipped, saying which is missing.
 */
class LayoutCheckTest {
  private static final Path HEADER = Path.of("/usr/include/infiniband/verbs.h");

  @Test
  void javaLayoutsMatchTheInstalledHeader(@TempDir Path dir) throws Exception {
    Assumptions.assumeTrue(Files.isRegularFile(HEADER),
        HEADER + " is missing (install libibverbs-dev): cannot check the struct layouts");
    Assumptions.assumeTrue(onPath("gcc"), "gcc is not installed: cannot compile the layout probe");
    Path source = Path.of("src/test/c/layout_probe.c");
    if (!Files.exists(source)) {
      source = Path.of("rdma-reactive-native/src/test/c/layout_probe.c");
    }
    assertThat(source).exists();
    Path exe = dir.resolve("layout_probe");
    String compile = run(dir, "gcc", "-Wall", "-Werror", "-o", exe.toString(), source.toAbsolutePath().toString());
    assertThat(Files.isExecutable(exe)).as("gcc output:\n%s", compile).isTrue();

    Map<String, Long> probed = new LinkedHashMap<>();
    for (String line : run(dir, exe.toString()).split("\n")) {
      if (line.isBlank()) {
        continue;
      }
      String[] kv = line.trim().split(" ");
      probed.put(kv[0], Long.parseLong(kv[1]));
    }
    Map<String, Long> java = VerbsLayout.table();
    assertThat(java).as("every layout value the binding uses").isNotEmpty();
    // Both directions: a Java value the probe does not check, or a probed one Java lacks, is drift too.
    assertThat(java.keySet()).containsExactlyInAnyOrderElementsOf(probed.keySet());
    Map<String, String> drift = new LinkedHashMap<>();
    java.forEach((k, v) -> {
      if (!v.equals(probed.get(k))) {
        drift.put(k, "java " + v + " vs verbs.h " + probed.get(k));
      }
    });
    assertThat(drift).as("layout drift between VerbsLayout and verbs.h").isEmpty();
    FLYWEIGHTS.forEach((name, fields) -> assertThat(fields).as("%s against verbs.h", name)
        .allSatisfy((k, v) -> assertThat(probed).as("%s: %s", name, k).containsEntry(k, v)));
    // The fast paths' anchors, as measured on rdma-core 44 / x86-64.
    assertThat(VerbsLayout.CONTEXT_OPS_POLL_CQ).isEqualTo(96);
    assertThat(VerbsLayout.VERBS_CONTEXT_CONTEXT + VerbsLayout.SIZEOF_CONTEXT).isEqualTo(VerbsLayout.SIZEOF_VERBS_CONTEXT);
  }

  /** Each struct flyweight writes only fields the probe checks, at the offsets in VerbsLayout. */
  @Test
  void everyFlyweightFieldIsInTheCheckedTable() {
    Map<String, Long> table = VerbsLayout.table();
    assertThat(FLYWEIGHTS).hasSize(4);
    FLYWEIGHTS.forEach((name, fields) -> {
      assertThat(fields).as(name).isNotEmpty().containsKey("sizeof." + name);
      fields.forEach((k, v) -> assertThat(table).as("%s: %s", name, k).containsEntry(k, v));
    });
  }

  private static final Map<String, Map<String, Long>> FLYWEIGHTS = Map.of(
      "ibv_qp_init_attr", QpInitAttr.FIELDS, "ibv_send_wr", SendWr.FIELDS, "ibv_recv_wr", RecvWr.FIELDS,
      "ibv_sge", Sge.FIELDS);

  private static boolean onPath(String tool) {
    for (String d : System.getenv().getOrDefault("PATH", "").split(":")) {
      if (!d.isEmpty() && Files.isExecutable(Path.of(d, tool))) {
        return true;
      }
    }
    return false;
  }

  private static String run(Path dir, String... cmd) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("%s failed:\n%s", String.join(" ", cmd), out).isZero();
    return out;
  }
}
