package io.rdmareactive.rsocket;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import org.junit.jupiter.api.Test;

/** The transports' bounds on frames waiting for credits: defaults, immutable settings, typed refusals. */
class PendingLimitTest {
  @Test
  void defaultsAreEightThousandFramesAndSixtyFourMebibytes() {
    RdmaClientTransport client = RdmaClientTransport.create("127.0.0.1", 7000);
    RdmaServerTransport server = RdmaServerTransport.create("127.0.0.1", 0);
    assertThat(client.maxPendingFrames()).isEqualTo(8192);
    assertThat(client.maxPendingBytes()).isEqualTo(64L << 20);
    assertThat(server.maxPendingFrames()).isEqualTo(8192);
    assertThat(server.maxPendingBytes()).isEqualTo(64L << 20);
  }

  @Test
  void eachSettingMakesANewTransportAndKeepsTheOther() {
    RdmaClientTransport base = RdmaClientTransport.create("127.0.0.1", 7000);
    RdmaClientTransport client = base.maxPendingFrames(16).maxPendingBytes(1 << 20);
    assertThat(client.maxPendingFrames()).isEqualTo(16);
    assertThat(client.maxPendingBytes()).isEqualTo(1 << 20);
    assertThat(base.maxPendingBytes()).isEqualTo(RdmaClientTransport.DEFAULT_MAX_PENDING_BYTES);
    RdmaServerTransport server = RdmaServerTransport.create("127.0.0.1", 0).maxPendingBytes(3 << 20).maxPendingFrames(9);
    assertThat(server.maxPendingBytes()).isEqualTo(3 << 20);
    assertThat(server.maxPendingFrames()).isEqualTo(9);
  }

  @Test
  void boundsBelowOneAreRefusedNamingTheSetting() {
    RdmaClientTransport client = RdmaClientTransport.create("127.0.0.1", 7000);
    RdmaServerTransport server = RdmaServerTransport.create("127.0.0.1", 0);
    assertThatIllegalArgumentException().isThrownBy(() -> client.maxPendingBytes(0))
        .withMessage("maxPendingBytes must be positive: 0");
    assertThatIllegalArgumentException().isThrownBy(() -> server.maxPendingBytes(-1))
        .withMessage("maxPendingBytes must be positive: -1");
    assertThatIllegalArgumentException().isThrownBy(() -> client.maxPendingFrames(0))
        .withMessage("maxPendingFrames must be positive: 0");
    assertThatIllegalArgumentException().isThrownBy(() -> server.maxPendingFrames(0))
        .withMessage("maxPendingFrames must be positive: 0");
  }
}
