package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.ResourceBusyException;
import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import io.rdmareactive.rdma.spi.RdmaProvider;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.RdmaContext;
import java.lang.foreign.Arena;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Messages from registered memory are released in order, each once every data send up to its
 * last one retired (with selective signaling, when a later signaled send completes), and until
 * then their region cannot be deregistered.
 */
class RegisteredSendsTest {
  private final RegisteredSends sends = new RegisteredSends();
  private RdmaContext context;
  private ProtectionDomain pd;
  private Arena arena;
  private MemoryRegion region;

  @BeforeEach
  void register() {
    RdmaProvider provider = InMemoryProvider.create();
    context = provider.open(provider.devices().getFirst().name());
    pd = context.allocateProtectionDomain();
    arena = Arena.ofShared();
    region = pd.registerMemory(arena.allocate(4096, 4096), Access.local());
  }

  @AfterEach
  void free() {
    region.close();
    pd.close();
    context.close();
    arena.close();
  }

  private RegisteredMessage taken() {
    RegisteredMessage m = OutboundMessage.of(region, 0, 100);
    m.take(pd);
    return m;
  }

  private static boolean released(RegisteredMessage m) {
    return m.released().toFuture().isDone();
  }

  @Test
  void eachIsReleasedOnceTheSendsUpToItsLastRetiredInOrder() {
    RegisteredMessage first = taken();
    RegisteredMessage second = taken();
    sends.posted(first, 3);
    sends.posted(second, 5);
    sends.retired(2);
    assertThat(released(first)).isFalse();
    assertThatThrownBy(region::close).as("held by the messages in flight").isInstanceOf(ResourceBusyException.class);
    sends.retired(4); // one signaled completion retires the unsignaled sends 3 and 4 with it
    assertThat(released(first)).isTrue();
    assertThat(released(second)).isFalse();
    sends.retired(5);
    assertThat(released(second)).isTrue();
    assertThat(region.isClosed()).isFalse();
  }

  @Test
  void oneAbandonedHalfSentWaitsForWhatWasPostedOfIt() {
    RegisteredMessage before = taken();
    RegisteredMessage half = taken();
    sends.posted(before, 2);
    sends.abandoned(half, 3, 1); // its first fragment is send 3; sends up to 1 retired
    assertThat(released(before) || released(half)).isFalse();
    sends.retired(3);
    assertThat(released(before) && released(half)).isTrue();
    RegisteredMessage unposted = taken();
    sends.abandoned(unposted, 3, 3); // none of it posted, nothing in flight: released at once
    assertThat(released(unposted)).isTrue();
  }

  @Test
  void whatAGivenUpCloseStillHeldGoesWhenTheQueuePairIsDestroyed() {
    RegisteredMessage m = taken();
    sends.posted(m, 7);
    sends.releaseAll();
    assertThat(released(m)).isTrue();
    m.release(); // idempotent
    assertThat(released(m)).isTrue();
  }
}
