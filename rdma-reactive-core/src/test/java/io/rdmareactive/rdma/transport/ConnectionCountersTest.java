package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ConnectionCountersTest {

  @Test
  void viewsReleasedOnOtherThreadsCountAndTheHeldFigureNeverGoesNegative() throws InterruptedException {
    ConnectionCounters c = new ConnectionCounters(4);
    c.messageLetGo(); // a release seen before the pass that made its view: clamped, not negative
    assertThat(c.snapshot(0, 0).messagesHeld()).isZero();
    for (int i = 0; i < 1001; i++) {
      c.messageHeld();
    }
    Thread[] releasers = new Thread[4];
    for (int t = 0; t < releasers.length; t++) {
      releasers[t] = Thread.ofPlatform().start(() -> {
        for (int i = 0; i < 250; i++) {
          c.messageLetGo();
        }
      });
    }
    for (Thread t : releasers) {
      t.join();
    }
    assertThat(c.snapshot(0, 0).messagesHeld()).isZero(); // 1001 made, 1 + 4 x 250 let go
    c.messageHeld();
    assertThat(c.snapshot(0, 0).messagesHeld()).isEqualTo(1);
  }

  @Test
  void aMessageCountsAsSentWhenItsLastSendCompletes() {
    ConnectionCounters c = new ConnectionCounters(4);
    c.messagesPosted(3, 1); // sends 1..3: one message in three fragments
    c.messagesPosted(4, 1);
    c.dataCompleted(2);
    assertThat(c.snapshot(0, 0).messagesSent()).isZero();
    c.dataCompleted(3);
    assertThat(c.snapshot(0, 0).messagesSent()).isEqualTo(1);
    c.dataCompleted(4);
    assertThat(c.snapshot(0, 0).messagesSent()).isEqualTo(2);
    c.dataCompleted(5);
    assertThat(c.snapshot(0, 0).messagesSent()).isEqualTo(2);
  }

  @Test
  void aBatchCountsEachOfItsMessagesAndOneSend() {
    ConnectionCounters c = new ConnectionCounters(4);
    c.messagesPosted(1, 5); // one SEND carrying five messages
    c.messagesPosted(2, 1);
    c.dataCompleted(1);
    assertThat(c.snapshot(0, 0).messagesSent()).isEqualTo(5);
    assertThat(c.snapshot(0, 0).dataSends()).isEqualTo(1);
    c.dataCompleted(2);
    assertThat(c.snapshot(0, 0).messagesSent()).isEqualTo(6);
    assertThat(c.snapshot(0, 0).dataSends()).isEqualTo(2);
  }

  @Test
  void theRingOfMessageEndsWrapsAround() {
    ConnectionCounters c = new ConnectionCounters(2);
    for (long seq = 1; seq <= 7; seq++) {
      c.messagesPosted(seq, 1);
      c.dataCompleted(seq);
    }
    assertThat(c.snapshot(0, 0).messagesSent()).isEqualTo(7);
  }

  @Test
  void snapshotsCarryEveryCounterAndTheCredits() {
    ConnectionCounters c = new ConnectionCounters(4);
    c.messageReceived();
    c.bytesReceived(10);
    c.bytesReceived(5);
    c.bytesSent(7);
    c.creditUpdateSent();
    c.creditUpdateReceived();
    c.creditUpdateReceived();
    c.sendsInFlight(3);
    c.sendsInFlight(1);
    c.receiverNotReady();
    c.creditViolation();
    c.creditStall();
    c.completionError();
    c.completionError();
    c.doorbell();
    c.sendSignaled();
    c.sendSignaled();
    c.completionPolled();
    c.completionPolled();
    c.completionPolled();
    c.messageHeld();
    c.messageHeld();
    c.messageLetGo();
    c.bytesCopied(100);
    c.bytesCopied(28);
    assertThat(c.snapshot(9, 4096))
        .isEqualTo(new RdmaStatistics(0, 1, 7, 15, 1, 2, 9, 3, 1, 1, 1, 2, 4096, 0, 0, 1, 2, 3, 1, 128, 0));
  }
}
