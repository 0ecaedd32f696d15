package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayDeque;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The int FIFO of the rendezvous' DONEs: first in, first out, across wrap-arounds and growth. */
class IntRingTest {
  @Test
  void keepsOrderAcrossWrapsAndGrowthAsADequeDoes() {
    IntRing ring = new IntRing(2);
    ArrayDeque<Integer> model = new ArrayDeque<>();
    Random random = new Random(22);
    for (int step = 0; step < 100_000; step++) {
      if (model.isEmpty() || random.nextInt(5) < 3) {
        int v = random.nextInt();
        ring.add(v);
        model.add(v);
      } else {
        assertThat(ring.peek()).isEqualTo(model.peek());
        assertThat(ring.poll()).isEqualTo(model.poll());
      }
      assertThat(ring.size()).isEqualTo(model.size());
    }
    while (!model.isEmpty()) {
      assertThat(ring.poll()).isEqualTo(model.poll());
    }
    assertThat(ring.isEmpty()).isTrue();
  }

  @Test
  void anEmptyRingHasNoHead() {
    IntRing ring = new IntRing(4);
    assertThatThrownBy(ring::peek).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(ring::poll).isInstanceOf(IllegalStateException.class);
  }
}
