package io.rdmareactive.rdma.rdmacore;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.transport.DisposableRdmaServer;
import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * {@code rdma link delete rxe0} under a bound server with a connection open: the listener sees
 * RDMA_CM_EVENT_DEVICE_REMOVAL, the server's onDispose errors naming it, the connection fails,
 * everything is freed so that the deletion returns (librdmacm's own context of the device included:
 * see DeviceRemovals, and why a second device is added first). Its own tag and its own VM boot
 * (scripts/lib/device-removal-guest): the device is gone afterwards.
 */
@Tag("device-removal")
class NativeDeviceRemovalTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  @Test
  void deletingTheDeviceFailsTheListenerAndItsConnectionsAndTheDeletionReturns() throws Exception {
    String device = NativeTestSupport.deviceName();
    // librdmacm notices a removed device only while it still lists another one: a second Soft-RoCE
    // device keeps that true here (with none left, the deletion returns when the process ends).
    secondDevice();
    String host = NativeConnectionProviderTest.HOST;
    DisposableRdmaServer server = RdmaServer.create().host(host).port(0).option(RdmaOption.PROVIDER, "native")
        .handle((in, out) -> out.send(in.receive())).bindNow();
    RdmaConnection client = RdmaClient.create().host(host).port(server.port()).option(RdmaOption.PROVIDER, "native")
        .connectNow();
    StepVerifier.create(client.outbound().sendString(Mono.just("before")).thenMany(client.inbound().receiveString()
        .take(1))).expectNext("before").expectComplete().verify(WAIT);

    long start = System.nanoTime();
    Process delete = new ProcessBuilder("rdma", "link", "delete", device).redirectErrorStream(true).start();
    StepVerifier.create(server.onDispose())
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(ConnectionException.class)
            .hasMessageContaining("RDMA_CM_EVENT_DEVICE_REMOVAL"))
        .verify(WAIT);
    assertThat(server.isDisposed()).as("a server whose listener failed reports itself disposed").isTrue();
    StepVerifier.create(client.onDispose()).expectComplete().verify(WAIT);
    boolean returned = delete.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS);
    assertThat(returned).as("rdma link delete returned (nothing of ours holds the device); RDMA files this "
        + "process still has open: %s", returned ? "" : rdmaFiles()).isTrue();
    String output = new String(delete.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(delete.exitValue()).as("rdma link delete: %s", output).isZero();
    System.out.println("device removal: server failed and " + device + " deleted in "
        + Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms");
    server.disposeNow(WAIT); // a failed server's dispose does not throw
    assertThat(rdmaLinks()).doesNotContain(device);
  }

  /** rxe1 on a dummy netdev of its own, unless some other device besides the one deleted exists. */
  private static void secondDevice() throws IOException, InterruptedException {
    if (new NativeProvider().devices().size() > 1) {
      return;
    }
    for (String command : new String[] {"ip link add rdmatest1 type dummy", "ip link set rdmatest1 up",
        "rdma link add rxe1 type rxe netdev rdmatest1"}) {
      Process p = new ProcessBuilder(command.split(" ")).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0).as("%s: %s", command, out).isTrue();
    }
  }

  /** This process's open files on the RDMA stack (uverbs contexts, event channels, the CM), for a failure message. */
  private static String rdmaFiles() {
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      return fds.map(fd -> {
        try {
          return fd.getFileName() + " -> " + Files.readSymbolicLink(fd);
        } catch (IOException e) {
          return "";
        }
      }).filter(s -> s.contains("infiniband") || s.contains("rdma_cm") || s.contains("uverbs")).toList().toString();
    } catch (IOException e) {
      return "unknown (" + e + ")";
    }
  }

  private static String rdmaLinks() throws IOException, InterruptedException {
    Process p = new ProcessBuilder("rdma", "link", "show").redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor(10, TimeUnit.SECONDS);
    return out;
  }
}
