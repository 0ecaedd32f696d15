package io.rdmareactive.rdma.nativ;

import io.rdmareactive.rdma.conformance.TestSettings;
import io.rdmareactive.rdma.transport.TransportFixture;
import java.time.Duration;
import java.util.Map;

/** The native provider's fixture for the shared suites: rxe0 in the Soft-RoCE VM (or a device). */
public final class NativeFixture {
  private NativeFixture() {}

  /**
   * rxe0 under TCG: Java runs ~13x slower than on the host, so the sizes shrink where a smaller
   * run checks the same property, and waits grow where a timer tick or a round trip is slower.
   */
  public static final TransportFixture RXE = new TransportFixture() {
    @Override
    public String provider() {
      return NativeProvider.NAME;
    }

    @Override
    public String host() {
      return NativeConnectionProviderTest.HOST;
    }

    @Override
    public Map<String, Integer> liveResources() {
      return KernelResources.live();
    }

    /** rxe retries RNR as hardware does (forever at RNR_RETRY 7). */
    @Override
    public boolean retriesReceiverNotReady() {
      return true;
    }

    /** A shorter sequence checks the same ordering. */
    @Override
    public int sequenceLength() {
      return 2_000;
    }

    /** A timer tick and a probe's round trip take far longer than on the host. */
    @Override
    public Duration keepaliveInterval() {
      return Duration.ofSeconds(1);
    }

    /** Fewer connect attempts racing a dispose (each is a QP, CQ and PD on rxe0). */
    @Override
    public int raceConnections() {
      return 16;
    }

    /**
     * 10^4 rogue messages (RDMA_ROGUE_MESSAGES overrides): the heap checks compare after a tenth
     * and after all, so fewer rogues still show growth per rogue.
     */
    @Override
    public long rogueMessages() {
      return TestSettings.rogueMessages(10_000);
    }

    /** Credits may take a while to come back: wait longer before calling a rogue stalled. */
    @Override
    public Duration rogueStall() {
      return Duration.ofSeconds(5);
    }

    /** Fewer connections for the loop tests; the scale test has the full count. */
    @Override
    public int loopConnections() {
      return 50;
    }

    /** 1,000 connections (both ends in this JVM, 2,000 QPs on rxe0); RDMA_SCALE_CONNECTIONS overrides. */
    @Override
    public int scaleConnections() {
      return TestSettings.scaleConnections();
    }
  };
}
