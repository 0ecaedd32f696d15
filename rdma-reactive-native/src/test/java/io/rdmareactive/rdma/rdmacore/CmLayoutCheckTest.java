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

/**
 * The CM binding's struct offsets and constants ({@link CmLayout}) against the installed
 * rdma_cma.h / rdma_verbs.h: compiles src/test/c/cm_layout_probe.c with gcc and compares every
 * line. Needs gcc and librdmacm-dev's headers (no RDMA device).
 */
class CmLayoutCheckTest {

  @Test
  void cmLayoutMatchesTheInstalledHeaders() throws Exception {
    Path source = Path.of("src/test/c/cm_layout_probe.c").toAbsolutePath();
    assertThat(source).exists();
    Assumptions.assumeTrue(Files.exists(Path.of("/usr/include/rdma/rdma_cma.h")),
        "skipped: /usr/include/rdma/rdma_cma.h missing (install librdmacm-dev) so the layout cannot be checked");
    Path binary = Path.of("target", "cm_layout_probe").toAbsolutePath();
    Files.createDirectories(binary.getParent());
    Run compile;
    try {
      compile = run("gcc", "-Wall", "-o", binary.toString(), source.toString());
    } catch (IOException e) {
      Assumptions.abort("skipped: gcc is not installed, so the layout cannot be checked (" + e.getMessage() + ")");
      return;
    }
    assertThat(compile.exit()).as("gcc output: %s", compile.output()).isZero();
    Run probe = run(binary.toString());
    assertThat(probe.exit()).isZero();

    Map<String, Long> fromC = new LinkedHashMap<>();
    for (String line : probe.output().split("\n")) {
      if (!line.isBlank()) {
        String[] parts = line.trim().split(" ");
        fromC.put(parts[0], Long.parseLong(parts[1]));
      }
    }
    assertThat(fromC).as("every probe line has a Java counterpart and vice versa")
        .containsOnlyKeys(CmLayout.table().keySet());
    assertThat(CmLayout.table()).containsExactlyInAnyOrderEntriesOf(fromC);
  }

  @Test
  void verbsMembersTheCmHelpersReadAreInTheVerbsTable() {
    // rdma_post_send/recv and rdma_get_*_comp go through these; VerbsLayout's own test checks their values.
    assertThat(VerbsLayout.table()).containsKeys("ibv_context.ops.poll_cq", "ibv_context.ops.req_notify_cq",
        "ibv_context.ops.post_send", "ibv_context.ops.post_recv", "ibv_context.ops.post_srq_recv",
        "sizeof.ibv_send_wr", "sizeof.ibv_recv_wr", "sizeof.ibv_wc", "ibv_comp_channel.fd", "ibv_mr.lkey");
    assertThat(VerbsLayout.CONTEXT_OPS_POLL_CQ).isEqualTo(96);
    assertThat(VerbsLayout.CONTEXT_OPS_REQ_NOTIFY_CQ).isEqualTo(104);
    assertThat(VerbsLayout.CONTEXT_OPS_POST_SEND).isEqualTo(208);
    assertThat(VerbsLayout.CONTEXT_OPS_POST_RECV).isEqualTo(216);
  }

  private record Run(int exit, String output) {}

  private static Run run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("timed out: " + String.join(" ", command));
    }
    return new Run(p.exitValue(), out);
  }
}
