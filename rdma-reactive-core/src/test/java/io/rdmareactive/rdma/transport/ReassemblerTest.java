package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

class ReassemblerTest {
  private static final int MORE = Protocol.immediate(0, true, false);
  private static final int LAST = Protocol.immediate(0, false, false);

  private static MemorySegment bytes(int from, int length) {
    byte[] b = new byte[length];
    for (int i = 0; i < length; i++) {
      b[i] = (byte) (from + i);
    }
    return MemorySegment.ofArray(b);
  }

  private static byte[] expected(int length) {
    return bytes(0, length).toArray(ValueLayout.JAVA_BYTE);
  }

  /** Feeds {@code total} bytes in fragments of {@code chunk}; returns the message the last one completes. */
  private static byte[] feed(Reassembler r, int total, int chunk) {
    for (int off = 0; ; off += chunk) {
      int n = Math.min(chunk, total - off);
      int header = off + n < total ? MORE : LAST;
      assertThat(r.isFragment(header)).isTrue();
      assertThat(r.append(bytes(off, n), 0, n)).isTrue();
      byte[] whole = r.complete(header);
      if (header == LAST) {
        assertThat(whole).isNotNull();
        return whole;
      }
      assertThat(whole).isNull();
    }
  }

  @Test
  void aSendWithoutMoreOutsideAMessageIsNoFragment() {
    Reassembler r = new Reassembler(1 << 20);
    assertThat(r.isFragment(LAST)).isFalse();
    assertThat(r.isFragment(Protocol.immediate(7, false, false))).isFalse();
    assertThat(r.isFragment(MORE)).isTrue();
  }

  @Test
  void theLastFragmentIsPartOfTheMessageInProgress() {
    Reassembler r = new Reassembler(1 << 20);
    r.append(bytes(0, 10), 0, 10);
    assertThat(r.isFragment(LAST)).as("no MORE bit, but a message is in progress").isTrue();
  }

  @Test
  void saysHowMuchOfAMessageInProgressArrivedUntilItCompletesOrIsCleared() {
    Reassembler r = new Reassembler(1 << 20);
    assertThat(r.inProgress()).isEqualTo(-1);
    r.append(bytes(0, 10), 0, 10);
    r.append(bytes(10, 5), 0, 5);
    assertThat(r.inProgress()).isEqualTo(15);
    assertThat(r.complete(LAST)).hasSize(15);
    assertThat(r.inProgress()).as("after the last fragment").isEqualTo(-1);
    r.append(bytes(0, 3), 0, 3);
    r.clear();
    assertThat(r.inProgress()).as("after clear").isEqualTo(-1);
  }

  @Test
  void joinsFragmentsInOrderToTheExactLength() {
    Reassembler r = new Reassembler(1 << 20);
    assertThat(feed(r, 5000, 1024)).isEqualTo(expected(5000));
    assertThat(r.isFragment(LAST)).isFalse();
  }

  @Test
  void growsPastItsFirstGuess() {
    Reassembler r = new Reassembler(1 << 20);
    assertThat(feed(r, 300_000, 100)).isEqualTo(expected(300_000));
  }

  @Test
  void readsAtTheGivenOffset() {
    Reassembler r = new Reassembler(100);
    MemorySegment buffers = bytes(0, 64);
    r.append(buffers, 32, 4);
    r.append(buffers, 8, 2);
    assertThat(r.complete(LAST)).containsExactly(32, 33, 34, 35, 8, 9);
  }

  @Test
  void aMessageOfExactlyTheMaximumIsAccepted() {
    Reassembler r = new Reassembler(3000);
    assertThat(feed(r, 3000, 1024)).hasSize(3000);
  }

  @Test
  void aMessageOverTheMaximumIsRefusedAndDropped() {
    Reassembler r = new Reassembler(2000);
    assertThat(r.append(bytes(0, 1024), 0, 1024)).isTrue();
    assertThat(r.append(bytes(0, 1024), 0, 1024)).isFalse();
    assertThat(r.complete(LAST)).as("nothing left to deliver").isNull();
    assertThat(r.isFragment(LAST)).isFalse();
  }

  @Test
  void clearDropsTheMessageInProgress() {
    Reassembler r = new Reassembler(1 << 20);
    r.append(bytes(0, 10), 0, 10);
    r.clear();
    assertThat(r.complete(LAST)).isNull();
    assertThat(r.isFragment(LAST)).isFalse();
  }

  @Test
  void aMessageFillingTheFirstGuessExactlyComesWhole() {
    Reassembler r = new Reassembler(1 << 20);
    r.append(bytes(0, 512), 0, 512);
    r.append(bytes(512, 512), 0, 512);
    byte[] whole = r.complete(LAST);
    assertThat(whole).hasSize(1024).isEqualTo(expected(1024));
  }

  @Test
  void eachMessageCountsOnlyItsOwnBytesAgainstTheMaximum() {
    Reassembler r = new Reassembler(3000);
    assertThat(feed(r, 3000, 1024)).hasSize(3000);
    assertThat(feed(r, 2500, 1024)).as("the previous message's length is not carried over").hasSize(2500);
  }

  @Test
  void aRefusedMessageDoesNotCountAgainstTheNextOne() {
    Reassembler r = new Reassembler(2000);
    r.append(bytes(0, 1024), 0, 1024);
    assertThat(r.append(bytes(0, 1024), 0, 1024)).isFalse();
    assertThat(feed(r, 2000, 1024)).isEqualTo(expected(2000));
  }
}
