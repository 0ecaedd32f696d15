package io.rdmareactive.rsocket;

import io.rdmareactive.rdma.transport.DisposableRdmaServer;
import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaServer;
import io.rdmareactive.rdma.transport.TransportFixture;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import reactor.core.publisher.Mono;

/**
 * RSocket frames from registered memory on librdmacm and rxe0 (scripts/softroce-vm; address
 * RDMA_TEST_ADDRESS, default 10.0.0.1); excluded from host runs by its tag. The kernel's resource
 * counts (MRs of the slab and the buffers) are read by the VM phase before and after.
 */
@Tag("native")
class NativeRegisteredFramesTest extends AbstractRegisteredFramesTest {
  private static final TransportFixture RXE = new TransportFixture() {
    @Override
    public String provider() {
      return "native";
    }

    @Override
    public String host() {
      return System.getenv().getOrDefault("RDMA_TEST_ADDRESS", "10.0.0.1");
    }

    /** The kernel's counts on the device (only this JVM uses rxe0 in the VM): the slab's MR and the loops' PD included. */
    @Override
    public Map<String, Integer> liveResources() {
      return kernelCounts();
    }
  };

  /** {@code rdma resource show}'s summary ("0: rxe0: pd 1 cq 2 qp 1 cm_id 0 mr 0 ctx 0"), but contexts (kept open by the provider). */
  static Map<String, Integer> kernelCounts() {
    try {
      Process p = new ProcessBuilder("rdma", "resource", "show").redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      if (!p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new AssertionError("rdma resource show failed:\n" + out);
      }
      Map<String, Integer> counts = new java.util.TreeMap<>();
      java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\b([a-z_]+) (\\d+)").matcher(out);
      while (m.find()) {
        if (!m.group(1).equals("ctx")) {
          counts.merge(m.group(1), Integer.parseInt(m.group(2)), Integer::sum);
        }
      }
      return counts;
    } catch (java.io.IOException e) {
      throw new AssertionError("the 'rdma' tool (iproute2) is needed for the leak check", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /**
   * The provider keeps its CM's device context, and a protection domain on it, for the rest of
   * the process once it first connects: made here, before any test's baseline, so that the
   * baselines count only what the tests make.
   */
  @BeforeAll
  static void openTheProvidersDeviceContext() {
    Duration wait = Duration.ofSeconds(60);
    DisposableRdmaServer server = RdmaServer.create().host(RXE.host()).port(0).option(RdmaOption.PROVIDER, "native")
        .handle((in, out) -> Mono.never()).bindNow(wait);
    try {
      RdmaConnection c = RdmaClient.create().host(RXE.host()).port(server.port()).option(RdmaOption.PROVIDER, "native")
          .connectNow(wait);
      c.dispose();
      c.onDispose().block(wait);
    } finally {
      server.disposeNow(wait);
    }
  }

  @Override
  protected TransportFixture fixture() {
    return RXE;
  }

  @Override
  protected int count() {
    return 50;
  }
}
