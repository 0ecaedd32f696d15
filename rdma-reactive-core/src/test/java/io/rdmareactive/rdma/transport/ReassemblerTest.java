package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
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

  /** A first fragment: the declared length, then {@code n} data bytes. */
  private static MemorySegment first(int total, int n) {
    ByteBuffer b = ByteBuffer.allocate(Protocol.TOTAL_LENGTH + n).putInt(total);
    for (int i = 0; i < n; i++) {
      b.put((byte) i);
    }
    return MemorySegment.ofArray(b.array());
  }

  @Test
  void aSendWithoutMoreOutsideAMessageIsNoFragment() {
    Reassembler r = new Reassembler();
    assertThat(r.isFragment(LAST)).isFalse();
    assertThat(r.isFragment(MORE)).isTrue();
  }

  @Test
  void theFirstFragmentDeclaresTheLengthAndTheMessageIsAllocatedOnceAtIt() {
    MemorySegment f = first(25, 10);
    assertThat(Reassembler.declaredLength(f, 0, (int) f.byteSize())).isEqualTo(25);
    Reassembler r = new Reassembler();
    r.begin(25);
    assertThat(r.declared()).isEqualTo(25);
    assertThat(r.isFragment(LAST)).as("the last fragment is part of the message in progress").isTrue();
    assertThat(r.append(f, Protocol.TOTAL_LENGTH, 10)).isTrue();
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
  void aFirstFragmentTooShortOrNegativeDeclaresNothing() {
    assertThat(Reassembler.declaredLength(bytes(0, 3), 0, 3)).isEqualTo(-1);
    MemorySegment negative = MemorySegment.ofArray(ByteBuffer.allocate(8).putInt(-5).array());
    assertThat(Reassembler.declaredLength(negative, 0, 8)).isEqualTo(-1);
  }

  @Test
  void readsTheDeclaredLengthAtTheGivenOffset() {
    MemorySegment buffers = MemorySegment.ofArray(new byte[64]);
    buffers.set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN), 32, 1000);
    assertThat(Reassembler.declaredLength(buffers, 32, 8)).isEqualTo(1000);
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
