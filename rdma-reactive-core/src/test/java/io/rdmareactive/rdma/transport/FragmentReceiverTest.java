package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * How a receiver reads headers by their place (wire protocol v5): a MORE after the end of a
 * message begins one, whose header is a length; credit updates and DONEs between fragments change
 * nothing. The arrival order only ({@link FragmentReceiver#begins}); the take order runs in every
 * transport suite.
 */
class FragmentReceiverTest {
  private static final int MORE = Protocol.immediate(3, true, false);
  private static final int LAST = Protocol.immediate(3, false, false);
  private static final int CREDIT = Protocol.immediate(3, false, true);

  private final FragmentReceiver fragments = new FragmentReceiver(null, null, null, null, 1 << 20, 1 << 20);

  @Test
  void aMoreAfterTheEndOfAMessageBeginsOneAndItsFragmentsDoNot() {
    assertThat(fragments.begins(LAST)).as("a whole message").isFalse();
    assertThat(fragments.begins(Protocol.firstFragment(3 * 4096))).isTrue();
    assertThat(fragments.begins(MORE)).isFalse();
    assertThat(fragments.begins(LAST)).as("its last").isFalse();
    assertThat(fragments.begins(Protocol.firstFragment(2 * 4096))).as("the next message").isTrue();
  }

  @Test
  void creditUpdatesAndDonesBetweenFragmentsChangeNothing() {
    assertThat(fragments.begins(Protocol.firstFragment(3 * 4096))).isTrue();
    assertThat(fragments.begins(CREDIT)).isFalse();
    assertThat(fragments.begins(Protocol.immediate(0, false, false) | Protocol.DONE)).isFalse();
    assertThat(fragments.begins(MORE)).as("still the same message").isFalse();
    assertThat(fragments.begins(LAST)).isFalse();
    assertThat(fragments.begins(CREDIT)).isFalse();
    assertThat(fragments.begins(MORE)).as("a new one after its last").isTrue();
  }

  @Test
  void aFirstFragmentWhoseLengthReadsAsFlagsStillBeginsAMessage() {
    // 2 MiB - 1: every grant bit, CREDIT, BATCH, RNDV, DONE and a reserved bit set
    assertThat(fragments.begins(Protocol.firstFragment(0x1F_FFFF))).isTrue();
    assertThat(fragments.begins(LAST)).isFalse();
    assertThat(fragments.begins(Protocol.firstFragment(0x1_0002))).as("CREDIT's place, two grants' worth").isTrue();
  }

  @Test
  void aBatchOrARendezvousDescriptorEndsWhatArrivedBefore() {
    assertThat(fragments.begins(Protocol.firstFragment(2 * 4096))).isTrue();
    assertThat(fragments.begins(Protocol.immediate(0, false, false) | Protocol.RNDV)).isFalse(); // a violation, caught when taken
    assertThat(fragments.begins(MORE)).isTrue();
    assertThat(fragments.begins(Protocol.immediate(0, false, false) | Protocol.BATCH)).isFalse();
    assertThat(fragments.begins(MORE)).isTrue();
  }
}
