package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class CreditWindowTest {

  @Test
  void startsWithTheReserveAndKeepsTheLastCreditForAnUpdate() {
    CreditWindow w = new CreditWindow(64);
    assertThat(w.credits()).isEqualTo(Protocol.RESERVE);
    assertThat(w.canSendData()).isTrue();
    assertThat(w.dataCapacity()).isEqualTo(1);

    assertThat(w.sent()).isTrue();
    assertThat(w.credits()).isEqualTo(1);
    assertThat(w.canSendData()).isFalse();
    assertThat(w.dataCapacity()).isZero();
  }

  @Test
  void arrivalsAddTheirGrantsAndIgnoreTheFlags() {
    CreditWindow w = new CreditWindow(64);
    w.arrived(Protocol.immediate(5, true, false));
    w.arrived(Protocol.immediate(3, false, true));
    assertThat(w.credits()).isEqualTo(Protocol.RESERVE + 8);
  }

  @Test
  void aFirstFragmentSentKeepsTheGrantsPendingForTheNextSend() {
    CreditWindow w = new CreditWindow(64);
    w.receivePosted();
    w.receivePosted();
    assertThat(w.sentWithoutGrants()).isTrue();
    assertThat(w.credits()).isEqualTo(Protocol.RESERVE - 1);
    assertThat(w.grantsPending()).as("its header declared a length: nothing announced").isEqualTo(2);
    assertThat(w.header(false, false) & Protocol.GRANT_MASK).isEqualTo(2);
  }

  @Test
  void aFirstFragmentArrivingUsesACreditAndGrantsNothing() {
    CreditWindow w = new CreditWindow(64);
    // whatever its header's low bits read (a length's), a first fragment grants nothing
    assertThat(w.arrivedWithoutGrants()).isNull();
    assertThat(w.arrivedWithoutGrants()).isNull();
    assertThat(w.credits()).isEqualTo(Protocol.RESERVE);
    assertThat(w.arrivedWithoutGrants()).as("beyond the reserve it was granted").contains("beyond the 2 credits");
  }

  @Test
  void theHeaderAnnouncesThePendingGrantsAndSendingClearsThem() {
    CreditWindow w = new CreditWindow(64);
    w.receivePosted();
    w.receivePosted();
    w.receivePosted();
    int header = w.header(true, false);
    assertThat(header & Protocol.GRANT_MASK).isEqualTo(3);
    assertThat(header & Protocol.MORE).isNotZero();
    assertThat(header & Protocol.CREDIT).isZero();
    assertThat(w.header(false, true) & (Protocol.MORE | Protocol.CREDIT)).isEqualTo(Protocol.CREDIT);

    w.sent();
    assertThat(w.grantsPending()).isZero();
    assertThat(w.header(false, false)).isZero();
  }

  @Test
  void sendingWithoutACreditIsReportedAsAViolation() {
    CreditWindow w = new CreditWindow(64);
    assertThat(w.sent()).isTrue();
    assertThat(w.sent()).isTrue();
    assertThat(w.credits()).isZero();
    assertThat(w.sent()).isFalse();
    assertThat(w.credits()).isEqualTo(-1);
    assertThat(w.canSendData()).isFalse();
    w.arrived(Protocol.immediate(3, false, false));
    assertThat(w.credits()).isEqualTo(2);
    assertThat(w.canSendData()).isTrue();
  }

  @Test
  void aCreditUpdateCarriesAtLeastTwoGrantsAndNeedsACredit() {
    CreditWindow w = new CreditWindow(64);
    w.arrived(0); // the peer used one of its two credits: it holds one
    w.receivePosted();
    assertThat(w.creditUpdateDue()).as("one grant is never worth an update").isFalse();
    w.receivePosted();
    assertThat(w.creditUpdateDue()).as("two grants reach what the peer holds").isTrue();

    w.sent();
    w.sent();
    w.receivePosted();
    w.receivePosted();
    assertThat(w.credits()).isZero();
    assertThat(w.creditUpdateDue()).as("no credit to send it with").isFalse();
  }

  @Test
  void belowTheThresholdAnUpdateWaitsWhileThePeerHoldsMoreCreditsThanPending() {
    CreditWindow w = new CreditWindow(64); // threshold 16
    for (int i = 0; i < 10; i++) {
      w.receivePosted();
    }
    // The peer holds 2 (its reserve): the grants already exceed that, so it may be stalled.
    assertThat(w.creditUpdateDue()).isTrue();
    w.sent(); // peer now holds 12
    for (int i = 0; i < 15; i++) {
      w.receivePosted();
    }
    assertThat(w.creditUpdateDue()).as("15 < 16 and the peer holds 12 < 15").isTrue();

    CreditWindow quiet = new CreditWindow(64);
    for (int i = 0; i < 12; i++) {
      quiet.receivePosted();
    }
    quiet.sent(); // peer holds 14
    for (int i = 0; i < 15; i++) {
      quiet.receivePosted();
    }
    assertThat(quiet.creditUpdateDue()).as("peer holds 14 < 15 pending").isTrue();
    quiet.arrived(Protocol.immediate(4, false, false)); // the peer used one, granted four
    quiet.sent(); // announces 15: the peer holds 13 + 15 = 28
    for (int i = 0; i < 15; i++) {
      quiet.receivePosted();
    }
    assertThat(quiet.creditUpdateDue()).as("below the threshold, the peer not stalled").isFalse();
    quiet.receivePosted();
    assertThat(quiet.creditUpdateDue()).as("the threshold reached").isTrue();
  }

  @Test
  void updatesAnsweringUpdatesDieOut() {
    CreditWindow a = new CreditWindow(64);
    CreditWindow b = new CreditWindow(64);
    // a grants b two receives in an update; b reposts the one the update used, a single grant.
    a.receivePosted();
    a.receivePosted();
    assertThat(a.creditUpdateDue()).isTrue();
    int header = a.header(false, true);
    a.sent();
    b.arrived(header);
    b.receivePosted();
    assertThat(b.creditUpdateDue()).isFalse();
  }

  @Test
  void theThresholdIsAQuarterOfTheBuffersButAtLeastTwo() {
    assertThat(dueWithARichPeer(1, 2)).isTrue();
    assertThat(dueWithARichPeer(64, 15)).isFalse();
    assertThat(dueWithARichPeer(64, 16)).isTrue();
    assertThat(dueWithARichPeer(100, 24)).isFalse();
    assertThat(dueWithARichPeer(100, 25)).isTrue();
  }

  /** Whether {@code pending} grants are due when the peer still holds 40 credits. */
  private static boolean dueWithARichPeer(int bufferCount, int pending) {
    CreditWindow w = new CreditWindow(bufferCount);
    for (int i = 0; i < 38; i++) {
      w.receivePosted();
    }
    w.sent();
    for (int i = 0; i < pending; i++) {
      w.receivePosted();
    }
    return w.creditUpdateDue();
  }

  @Test
  void rejectsABufferCountWhoseGrantsWouldOverflowTheHeader() {
    assertThatThrownBy(() -> new CreditWindow(Protocol.GRANT_MASK)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new CreditWindow(0)).isInstanceOf(IllegalArgumentException.class);
    new CreditWindow(Protocol.GRANT_MASK - Protocol.RESERVE);
  }

  @Test
  void theGrantFieldIsSixteenBitsWide() {
    CreditWindow w = new CreditWindow(Protocol.GRANT_MASK - Protocol.RESERVE);
    for (int i = 0; i < Protocol.GRANT_MASK; i++) {
      w.receivePosted();
    }
    assertThat(w.header(false, false)).isEqualTo(Protocol.GRANT_MASK);
    w.arrived(w.header(true, true));
    assertThat(w.credits()).isEqualTo(Protocol.RESERVE + Protocol.GRANT_MASK);
  }

  @Test
  void aSendBeyondTheCreditsGrantedIsAViolation() {
    CreditWindow w = new CreditWindow(8);
    // The peer starts with the reserve: two SENDs are covered, a third is not.
    assertThat(w.arrived(Protocol.immediate(0, false, false))).isNull();
    assertThat(w.arrived(Protocol.immediate(0, false, false))).isNull();
    assertThat(w.arrived(Protocol.immediate(0, false, false))).contains("beyond the 2 credits");
    // Grants this side announced cover more.
    CreditWindow g = new CreditWindow(8);
    for (int i = 0; i < 4; i++) {
      g.receivePosted();
    }
    g.sent(); // announces the four
    for (int i = 0; i < 6; i++) {
      assertThat(g.arrived(0)).as("arrival %d of 6 granted", i + 1).isNull();
    }
    assertThat(g.arrived(0)).contains("beyond the 6 credits");
  }

  @Test
  void grantsBeyondTheBuffersThePeerAnnouncedAreAViolation() {
    CreditWindow w = new CreditWindow(8);
    w.peerBuffers(4); // at most 4 + the reserve of 2
    assertThat(w.arrived(Protocol.immediate(4, false, false))).isNull(); // 2 + 4 = 6
    assertThat(w.credits()).isEqualTo(6);
    CreditWindow rogue = new CreditWindow(8);
    rogue.peerBuffers(4);
    assertThat(rogue.arrived(Protocol.immediate(0xFFFF, false, false))).contains("more than the 6 receive buffers");
    assertThat(rogue.credits()).as("a violating grant is not taken").isEqualTo(2);
  }

  /** A SEND may overtake the hello that says how many buffers its sender has: its grants are checked when the hello comes. */
  @Test
  void grantsBeforeThePeersHelloAreCheckedWhenItComes() {
    CreditWindow rogue = new CreditWindow(8);
    assertThat(rogue.arrived(Protocol.immediate(0xFFFF, false, false))).as("how many it may grant is not known yet").isNull();
    assertThat(rogue.peerBuffers(4)).contains("more than the 6 receive buffers");
    CreditWindow fair = new CreditWindow(8);
    assertThat(fair.arrived(Protocol.immediate(4, false, false))).isNull();
    assertThat(fair.peerBuffers(4)).isNull();
  }
}
