package io.rdmareactive.rdma.rdmacore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.verbs.SendRequest;
import org.junit.jupiter.api.Test;

/** The slot ledger on its own: capacity, rollback, and which sends a completion retires. */
class WorkRequestLedgerTest {

  @Test
  void aFullSendQueueFailsWithEnomemNamingTheOwnerAndAnAbortGivesTheSlotBack() {
    WorkRequestLedger l = new WorkRequestLedger("QP-x", 2, 1, false, false);
    l.beginSend(1, SendRequest.SIGNALED);
    long posted = l.beginSend(2, SendRequest.SIGNALED);
    assertThatThrownBy(() -> l.beginSend(3, SendRequest.SIGNALED))
        .isInstanceOfSatisfying(NativeCallException.class, e -> assertThat(e.errno()).isEqualTo(NativeCallException.ENOMEM))
        .hasMessageContaining("QP-x").hasMessageContaining("2 of 2");
    l.abortSend(posted);
    l.beginSend(3, SendRequest.SIGNALED); // the aborted slot is free again
  }

  @Test
  void aSignaledCompletionRetiresTheUnsignaledSendsBeforeIt() {
    WorkRequestLedger l = new WorkRequestLedger("qp", 3, 0, false, false);
    l.beginSend(1, 0);
    l.beginSend(2, 0);
    l.beginSend(3, SendRequest.SIGNALED);
    assertThatThrownBy(() -> l.beginSend(4, 0)).isInstanceOf(NativeCallException.class);
    l.completed(true, false, 0, false, 3);
    for (int i = 0; i < 3; i++) {
      l.beginSend(10 + i, 0); // all three slots came back
    }
  }

  @Test
  void onOneCqAnErrorCompletionIsASendsWhenItsWrIdIsOutstandingAndAReceivesOtherwise() {
    WorkRequestLedger l = new WorkRequestLedger("qp", 1, 1, true, false);
    l.beginSend(7, 0);
    l.beginReceive();
    l.completed(true, true, 5, false, 99); // flushed, wr_id of no send: the receive's
    l.beginReceive();
    assertThatThrownBy(() -> l.beginSend(8, 0)).isInstanceOf(NativeCallException.class);
    l.completed(true, true, 5, false, 7); // the send's
    l.beginSend(8, 0);
  }
}
