package io.rdmareactive.samples.rsocket;

import java.time.Duration;
import org.junit.jupiter.api.Tag;

/**
 * The RSocket demo over RDMA on the native provider over Soft-RoCE (rxe0 at 10.0.0.1 in the VM):
 * run by the native test phase, not on the host. Java under TCG is ~13x slower: the first connect
 * of a JVM needs more than the default 10 s.
 */
@Tag("native")
class RSocketDemoNativeTest extends AbstractRSocketDemoTest {
  RSocketDemoNativeTest() {
    super("rdma", Duration.ofSeconds(180), "--rsocket-demo.host=10.0.0.1", "--rdma.provider=native",
        "--rdma.rsocket.client.connect-timeout=90s");
  }
}
