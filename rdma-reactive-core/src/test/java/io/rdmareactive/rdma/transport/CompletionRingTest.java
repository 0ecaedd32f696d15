package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.verbs.WorkCompletion;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CompletionRingTest {
  private static final WorkCompletion.Status OK = WorkCompletion.Status.SUCCESS;
  private final List<String> seen = new ArrayList<>();
  private final CompletionRing.Handler record = (wrId, status, length, hasImm, imm, failed) ->
      seen.add(wrId + " " + status + " " + length + (hasImm ? " imm=" + imm : "") + (failed != null ? " failed" : ""));

  @Test
  void handsOverOnlyWhatWasPublishedInOrderWithEveryField() {
    CompletionRing ring = new CompletionRing(4);
    assertThat(ring.offer(1, OK, 100, true, 0x1_0002, null)).isTrue();
    assertThat(ring.offer(2, OK, 0, false, 0, null)).isTrue();
    ring.drainTo(record);
    assertThat(seen).as("not yet published").isEmpty();

    ring.publish();
    WorkCompletion record2 = new WorkCompletion(3, WorkCompletion.Status.WR_FLUSH_ERR, WorkCompletion.Opcode.UNKNOWN,
        0, 0, 0, false, 0, 0);
    ring.offer(3, WorkCompletion.Status.WR_FLUSH_ERR, 0, false, 0, record2);
    ring.drainTo(record);
    assertThat(seen).containsExactly("1 SUCCESS 100 imm=65538", "2 SUCCESS 0");
    ring.publish();
    ring.drainTo(record);
    assertThat(seen).last().isEqualTo("3 WR_FLUSH_ERR 0 failed");
  }

  @Test
  void refusesMoreThanItsSizeUntilTheConsumerCatchesUp() {
    CompletionRing ring = new CompletionRing(3); // rounds up to 4
    for (int i = 0; i < 4; i++) {
      assertThat(ring.offer(i, OK, 0, false, 0, null)).isTrue();
    }
    assertThat(ring.offer(4, OK, 0, false, 0, null)).as("overflow").isFalse();
    ring.publish();
    ring.drainTo(record);
    assertThat(seen).hasSize(4);
    for (int i = 5; i < 9; i++) {
      assertThat(ring.offer(i, OK, 0, false, 0, null)).isTrue();
    }
    ring.publish();
    ring.drainTo(record);
    assertThat(seen).hasSize(8).last().isEqualTo("8 SUCCESS 0");
  }

  @Test
  void aCompletionWhoseHandlerThrowsIsNotHandedOverAgain() {
    CompletionRing ring = new CompletionRing(4);
    ring.offer(1, OK, 0, false, 0, null);
    ring.offer(2, OK, 0, false, 0, null);
    ring.offer(3, OK, 0, false, 0, null);
    ring.publish();
    assertThatThrownBy(() -> ring.drainTo((wrId, status, length, hasImm, imm, failed) -> {
      record.onCompletion(wrId, status, length, hasImm, imm, failed);
      if (wrId == 2) {
        throw new IllegalStateException("boom"); // after the handler gave its buffer back, say
      }
    })).hasMessage("boom");
    ring.drainTo(record);
    assertThat(seen).as("each once, the one that threw too").containsExactly("1 SUCCESS 0", "2 SUCCESS 0",
        "3 SUCCESS 0");
  }

  @Test
  void discardDropsEverythingPublishedAndFreesTheRoom() {
    CompletionRing ring = new CompletionRing(4);
    for (int i = 0; i < 4; i++) {
      ring.offer(i, OK, 0, false, 0, null);
    }
    ring.publish();
    ring.discard();
    ring.drainTo(record);
    assertThat(seen).isEmpty();
    assertThat(ring.offer(9, OK, 0, false, 0, null)).isTrue();
  }
}
