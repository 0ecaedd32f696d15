package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.RdmaContext;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class RegisteredBuffersTest {
  private static final int SIZE = 16 * 1024;
  private static final int PER_CHUNK = RegisteredBuffers.CHUNK_BYTES / SIZE;
  private final RdmaContext context = new InMemoryProvider().open("mem0");
  private final ProtectionDomain pd = context.allocateProtectionDomain();

  @AfterEach
  void close() {
    pd.close(); // fails if a region was left registered
    context.close();
  }

  @Test
  void registersOneReceiveChunkUpFrontAndNoSendMemory() {
    RegisteredBuffers b = RegisteredBuffers.register(pd, 66, 64, SIZE);
    assertThat(b.registeredBytes()).isEqualTo((long) PER_CHUNK * SIZE);
    assertThat(b.freeReceives()).isEqualTo(66);
    assertThat(b.freeSends()).isEqualTo(64);
    b.deregister();
    b.free();
  }

  @Test
  void growsAChunkAtATimeUpToTheCountAndThenRefuses() {
    RegisteredBuffers b = RegisteredBuffers.register(pd, 10, 1, SIZE);
    for (int i = 0; i < 10; i++) {
      assertThat(b.takeReceive()).as("lowest free index first").isEqualTo(i);
      assertThat(b.registeredBytes()).isEqualTo((long) Math.min(10, (i / PER_CHUNK + 1) * PER_CHUNK) * SIZE);
    }
    assertThat(b.freeReceives()).isZero();
    assertThatThrownBy(b::takeReceive).isInstanceOf(IllegalStateException.class).hasMessageContaining("all 10");
    b.freeReceive(7);
    assertThat(b.takeReceive()).isEqualTo(7);
    b.deregister();
    b.free();
  }

  @Test
  void eachBufferLivesInItsChunkAtItsOffset() {
    RegisteredBuffers b = RegisteredBuffers.register(pd, 2 * PER_CHUNK, 1, SIZE);
    for (int i = 0; i < 2 * PER_CHUNK; i++) {
      int index = b.takeReceive();
      b.receiveMemory(index).set(ValueLayout.JAVA_INT, b.receiveOffset(index), index);
    }
    assertThat(b.receiveRegion(0)).isNotSameAs(b.receiveRegion(PER_CHUNK));
    assertThat(b.receiveRegion(0)).isSameAs(b.receiveRegion(PER_CHUNK - 1));
    for (int i = 0; i < 2 * PER_CHUNK; i++) {
      assertThat(b.receiveMemory(i).get(ValueLayout.JAVA_INT, b.receiveOffset(i))).isEqualTo(i);
      assertThat(b.receiveOffset(i) + SIZE).isLessThanOrEqualTo(b.receiveMemory(i).byteSize());
    }
    b.deregister();
    b.free();
  }

  @Test
  void releasedBuffersComeBackThroughTheDrain() {
    RegisteredBuffers b = RegisteredBuffers.register(pd, 4, 1, SIZE);
    int a = b.takeReceive();
    int c = b.takeReceive();
    b.markReleased(c);
    b.markReleased(a);
    assertThat(b.reclaimReleased()).isEqualTo(2);
    assertThat(b.freeReceives()).isEqualTo(4);
    b.deregister();
    b.free();
  }

  @Test
  void aBufferComesBackWhenItsLastCountGoesAndAClosedConnectionsMemoryWithTheLastView() {
    RegisteredBuffers b = RegisteredBuffers.register(pd, 4, 1, SIZE);
    int a = b.takeReceive();
    int c = b.takeReceive();
    b.viewCreated(a);
    b.viewCreated(c);
    assertThat(b.retain(a)).isTrue(); // a copy in progress
    assertThat(b.unref(a)).as("the view's release, the copy still going").isFalse();
    assertThat(b.reclaimReleased()).isZero();
    assertThat(b.unref(a)).as("the copy done").isTrue();
    assertThat(b.retain(a)).as("a count on a buffer no view holds").isFalse();
    assertThat(b.reclaimReleased()).isEqualTo(1);
    assertThatThrownBy(() -> b.unref(a)).isInstanceOf(IllegalStateException.class);

    b.deregister();
    b.freeWhenUnused();
    assertThat(b.isFreed()).as("freed while a user holds a view").isFalse();
    assertThat(b.receiveMemory(c).get(ValueLayout.JAVA_BYTE, b.receiveOffset(c))).isZero(); // still readable
    b.unref(c);
    assertThat(b.isFreed()).as("freed with the last view").isTrue();
    assertThatThrownBy(() -> b.receiveMemory(c).get(ValueLayout.JAVA_BYTE, 0)).isInstanceOf(IllegalStateException.class);
  }
}
