package io.rdmareactive.rdma.nativ;

import io.rdmareactive.rdma.transport.TransportFixture;
import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.transport.AbstractPortDownTest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * {@code ip link set <netdev> down} under the Soft-RoCE device (rxe0 over dummy0): rxe reports
 * IBV_EVENT_PORT_ERR on the device's async fd, and every connection on port 1 fails naming it.
 * Its own tag and its own VM boot (scripts/lib/device-removal-guest with tag link-fault): after
 * the netdev went down no RC connection works again in that boot.
 */
@Tag("link-fault")
class NativeLinkFaultTest extends AbstractPortDownTest {
  @Override
  protected TransportFixture fixture() {
    return NativeFixture.RXE;
  }
  private static final Pattern NETDEV = Pattern.compile("\\bnetdev (\\S+)");

  /** The netdev under the device's port 1, found before the clock starts. */
  private static String netdev;

  @BeforeAll
  static void deviceUp() throws IOException, InterruptedException {
    String device = NativeTestSupport.deviceName(); // skips, saying why, where there is no device
    NativeConnectionProviderTest.openCmDeviceContext();
    String link = run("rdma", "link", "show", device + "/1");
    Matcher m = NETDEV.matcher(link);
    assertThat(m.find()).as("the netdev under %s in: %s", device, link).isTrue();
    netdev = m.group(1);
  }

  @Override
  protected String device() {
    return NativeTestSupport.deviceName();
  }

  /** The VM runs under TCG: its netdev notifier, the loop's poll and the connections' loops are slow. */
  @Override
  protected Duration noticeBound() {
    return Duration.ofSeconds(20);
  }

  @Override
  protected void portDown() throws IOException, InterruptedException {
    run("ip", "link", "set", netdev, "down");
  }

  private static String run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("%s returned", String.join(" ", command)).isTrue();
    assertThat(p.exitValue()).as("%s: %s", String.join(" ", command), out).isZero();
    return out;
  }
}
