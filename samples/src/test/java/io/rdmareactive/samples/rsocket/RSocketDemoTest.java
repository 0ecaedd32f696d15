package io.rdmareactive.samples.rsocket;

import java.time.Duration;
import org.junit.jupiter.api.Nested;

/** The RSocket demo on the host: over TCP, and over RDMA on the in-memory provider. */
class RSocketDemoTest {
  private static final Duration WAIT = Duration.ofSeconds(30);

  @Nested
  class OverTcp extends AbstractRSocketDemoTest {
    OverTcp() {
      super("tcp", WAIT, "--rsocket-demo.host=127.0.0.1");
    }
  }

  @Nested
  class OverRdma extends AbstractRSocketDemoTest {
    OverRdma() {
      super("rdma", WAIT, "--rsocket-demo.host=127.0.0.1", "--rdma.provider=in-memory");
    }
  }
}
