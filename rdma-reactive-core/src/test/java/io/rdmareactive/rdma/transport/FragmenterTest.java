package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class FragmenterTest {

  /** Runs a message of {@code length} through and lists its fragments as "offset+length" and "more" flags. */
  private static List<String> fragments(Fragmenter f, long length) {
    Object message = new Object();
    f.start(message, length);
    List<String> out = new ArrayList<>();
    for (;;) {
      assertThat(f.message()).isSameAs(message);
      int n = f.nextLength();
      boolean more = f.moreAfter(n);
      out.add((f.lengthDue() ? "[length] " : "") + f.offset() + "+" + n + (more ? " MORE" : ""));
      boolean last = f.advance(n);
      assertThat(last).isEqualTo(!more);
      if (last) {
        assertThat(f.message()).isNull();
        return out;
      }
    }
  }

  @Test
  void aMessageThatFitsIsOneFragmentWithoutMore() {
    Fragmenter f = new Fragmenter(4096, 1 << 20);
    assertThat(fragments(f, 100)).containsExactly("0+100");
    assertThat(fragments(f, 4096)).containsExactly("0+4096");
  }

  @Test
  void aLargerMessageIsCutToTheChunkAndOnlyTheLastFragmentLacksMore() {
    Fragmenter f = new Fragmenter(4096, 1 << 20);
    assertThat(fragments(f, 4097)).containsExactly("[length] 0+4096 MORE", "4096+1");
    // the length goes in the first SEND's header, so a message of k whole buffers takes k SENDs
    assertThat(fragments(f, 3 * 4096)).containsExactly("[length] 0+4096 MORE", "4096+4096 MORE", "8192+4096");
    assertThat(f.sendsFor(3 * 4096)).isEqualTo(3);
  }

  @Test
  void anEmptyMessageIsOneEmptyFragment() {
    assertThat(fragments(new Fragmenter(64, 1024), 0)).containsExactly("0+0");
  }

  @Test
  void thePeersLimitsApplyFromTheHandshakeOn() {
    Fragmenter f = new Fragmenter(4096, 1 << 20);
    f.limits(1024, 2048);
    assertThat(f.chunk()).isEqualTo(1024);
    assertThat(f.maxMessage()).isEqualTo(2048);
    assertThat(fragments(f, 2048)).containsExactly("[length] 0+1024 MORE", "1024+1024");
  }

  @Test
  void sizesOverTheMaximumDoNotFit() {
    Fragmenter f = new Fragmenter(4096, 10_000);
    assertThat(f.fits(0)).isTrue();
    assertThat(f.fits(10_000)).isTrue();
    assertThat(f.fits(10_001)).isFalse();
    assertThat(f.fits(Long.MAX_VALUE)).isFalse();
  }

  @Test
  void abandoningReturnsTheMessageInProgressOnce() {
    Fragmenter f = new Fragmenter(10, 100);
    Object message = new Object();
    f.start(message, 25);
    f.advance(f.nextLength());
    assertThat(f.abandon()).isSameAs(message);
    assertThat(f.abandon()).isNull();
    assertThat(f.message()).isNull();
  }

  @Test
  void aRestartBeginsAtOffsetZero() {
    Fragmenter f = new Fragmenter(10, 100);
    f.start(new Object(), 25);
    f.advance(f.nextLength());
    f.abandon();
    assertThat(fragments(f, 15)).containsExactly("[length] 0+10 MORE", "10+5");
  }

  @Test
  void rejectsAnEmptyChunk() {
    assertThatThrownBy(() -> new Fragmenter(0, 100)).isInstanceOf(IllegalArgumentException.class);
  }
}
