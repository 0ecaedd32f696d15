package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.RdmaDevices;
import io.rdmareactive.rdma.conformance.TestSettings;
import io.rdmareactive.rdma.spi.ConnectionProvider;
import java.time.Duration;
import java.util.Map;

/**
 * A provider under the transport conformance suites: how to reach it, how to count its live verbs
 * objects, and the sizes that slow targets (TCG) shrink. Each provider's test names one fixture
 * instead of overriding the same hooks in every suite.
 */
public interface TransportFixture {
  /** The {@link RdmaOption#PROVIDER} value under test. */
  String provider();

  /** The address servers bind and clients connect to (an address of an RDMA device for native). */
  String host();

  /** Live verbs objects by type; compared before and after each test (empty when unknown). */
  Map<String, Integer> liveResources();

  /** The provider's connection SPI, for tests that build raw endpoints and rogue peers. */
  default ConnectionProvider connections() {
    return RdmaDevices.provider(provider()).connections();
  }

  /** Messages each way in the ordering test: lean on slow targets. */
  default int sequenceLength() {
    return 100_000;
  }

  /** Connections in the loop tests: many, but lean on slow targets. */
  default int loopConnections() {
    return 200;
  }

  /** Connections in the scale test (the acceptance: 10,000 in memory, 1,000 on rxe). */
  default int scaleConnections() {
    return 1_000;
  }

  /** Connect attempts racing a server's dispose; fewer on slow targets. */
  default int raceConnections() {
    return 64;
  }

  /** Whether the provider retries a SEND the receiver is not ready for (RNR), as hardware does. */
  default boolean retriesReceiverNotReady() {
    return false;
  }

  /** The keepalive interval of the keepalive tests; slow providers may want a longer one. */
  default Duration keepaliveInterval() {
    return Duration.ofMillis(200);
  }

  /** Rogue messages in the heap tests: 10^5 (RDMA_ROGUE_MESSAGES overrides); slow targets may send fewer. */
  default long rogueMessages() {
    return TestSettings.rogueMessages(100_000);
  }

  /** How long a rogue waits for a credit before it counts itself stalled (a patience, not a check). */
  default Duration rogueStall() {
    return Duration.ofSeconds(1);
  }
}
