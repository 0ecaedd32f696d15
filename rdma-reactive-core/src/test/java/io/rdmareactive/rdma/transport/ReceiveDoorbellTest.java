package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.RdmaContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Receives posted as lists, over a queue pair that records them and fails where told. */
class ReceiveDoorbellTest {
  private final RdmaContext context = new InMemoryProvider().open("mem0");
  private final ProtectionDomain pd = context.allocateProtectionDomain();
  private final RegisteredBuffers buffers = RegisteredBuffers.register(pd, 40, 1, 1024);
  private final SendDoorbellTest.RecordingQp qp = new SendDoorbellTest.RecordingQp();

  @AfterEach
  void close() {
    buffers.deregister();
    buffers.free();
    pd.close();
    context.close();
  }

  @Test
  void receivesGoAsOneListPerPost() {
    ReceiveDoorbell d = new ReceiveDoorbell(qp, buffers, 1024, 40);
    assertThat(d.post(5)).isEqualTo(5);
    assertThat(qp.receiveLists).hasSize(1);
    assertThat(qp.receiveLists.getFirst()).containsExactly(CompletionDispatcher.RECV, CompletionDispatcher.RECV | 1,
        CompletionDispatcher.RECV | 2, CompletionDispatcher.RECV | 3, CompletionDispatcher.RECV | 4);
    assertThat(d.post(40)).as("at most a list's length per post").isEqualTo(SendDoorbell.MAX_POST_LIST);
    assertThat(buffers.freeReceives()).isEqualTo(40 - 5 - SendDoorbell.MAX_POST_LIST);
    d.throwIfFailed(); // nothing failed
  }

  @Test
  void aPartialPostAtEveryPositionGivesTheRestBack() {
    for (int bad = 0; bad < 6; bad++) {
      int free = buffers.freeReceives();
      ReceiveDoorbell d = new ReceiveDoorbell(qp, buffers, 1024, 40);
      qp.failAt = bad;
      assertThat(d.post(6)).as("bad_wr " + bad).isEqualTo(bad);
      assertThat(buffers.freeReceives()).as("only the posted ones are taken").isEqualTo(free - bad);
      assertThatThrownBy(d::throwIfFailed).isInstanceOf(NativeCallException.class);
      d.throwIfFailed(); // once
      for (long wrId : qp.receiveLists.getLast()) {
        buffers.freeReceive((int) wrId); // as their completions would
      }
    }
  }
}
