package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

class ReassemblerTest {
  private static final int MORE = Protocol.immediate(0, true, false);
  private static final int LAST = Protocol.immediate(0, false, false);

  /** {@code n} bytes counting up from {@code from}. */
  private static MemorySegment bytes(int from, int n) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) (from + i);
    }
    return MemorySegment.ofArray(b);
  }

  @Test
  void aSendWithoutMoreOutsideAMessageIsNoFragment() {
    Reassembler r = new Reassembler();
    assertThat(r.isFragment(LAST)).isFalse();
    assertThat(r.isFragment(MORE)).isTrue();
  }

  @Test
  void theFirstFragmentDeclaresTheLengthAndTheMessageIsAllocatedOnceAtIt() {
    int header = Protocol.firstFragment(25);
    assertThat(Protocol.declared(header)).isEqualTo(25);
    MemorySegment f = bytes(0, 10); // a first fragment's bytes are all data: the length is in its header
    Reassembler r = new Reassembler();
    assertThat(r.isFragment(header)).isTrue();
    r.begin((int) Protocol.declared(header));
    assertThat(r.declared()).isEqualTo(25);
    assertThat(r.isFragment(LAST)).as("the last fragment is part of the message in progress").isTrue();
    assertThat(r.append(f, 0, 10)).isTrue();
    assertThat(r.inProgress()).isEqualTo(10);
    assertThat(r.missing()).isEqualTo(15);
    assertThat(r.complete()).as("not whole yet").isNull();
    assertThat(r.append(bytes(10, 15), 0, 15)).isTrue();
    byte[] whole = r.complete();
    assertThat(whole).hasSize(25);
    for (int i = 0; i < 25; i++) {
      assertThat(whole[i]).isEqualTo((byte) i);
    }
    assertThat(r.inProgress()).isEqualTo(-1);
    assertThat(r.declared()).isZero();
  }

  @Test
  void aFirstFragmentsHeaderCarriesEveryLengthUpTo31BitsAroundMore() {
    for (long n : new long[] {0, 1, 0xFFFF, 0x1_0000, 0x1_FFFF, 16 << 20, 256 << 20, Protocol.MAX_DECLARED}) {
      int header = Protocol.firstFragment(n);
      assertThat(Protocol.declared(header)).as("length %d", n).isEqualTo(n);
      assertThat(header & Protocol.MORE).as("MORE, length %d", n).isEqualTo(Protocol.MORE);
    }
    assertThat(Protocol.firstFragment(Protocol.MAX_DECLARED)).as("every bit used").isEqualTo(-1);
  }

  @Test
  void aLengthBeyond31BitsOrNegativeHasNoHeader() {
    assertThatThrownBy(() -> Protocol.firstFragment(Protocol.MAX_DECLARED + 1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Protocol.firstFragment(-1)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void fragmentsBeyondTheDeclaredLengthAreRefusedAndAppendNothing() {
    Reassembler r = new Reassembler();
    r.begin(10);
    assertThat(r.append(bytes(0, 8), 0, 8)).isTrue();
    assertThat(r.append(bytes(8, 3), 0, 3)).isFalse();
    assertThat(r.inProgress()).isEqualTo(8);
  }

  @Test
  void clearDropsTheMessageInProgress() {
    Reassembler r = new Reassembler();
    r.begin(10);
    r.append(bytes(0, 5), 0, 5);
    r.clear();
    assertThat(r.inProgress()).isEqualTo(-1);
    assertThat(r.missing()).isZero();
    assertThat(r.complete()).isNull();
    assertThat(r.isFragment(LAST)).isFalse();
  }

  @Test
  void anEmptyDeclaredMessageIsWholeAtOnce() {
    Reassembler r = new Reassembler();
    r.begin(0);
    assertThat(r.complete()).isEmpty();
  }
}
