package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.RdmaContext;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A loop's receive pool by counting: the SRQ holds every elastic grant outstanding, one reserve
 * grant per member and the headroom (a member's other reserve grants are backed by the slab's
 * capacity, not posted), each member's guarantee is always backed, elastic grants stop at the cap,
 * and the slab and the PD lease go only once the SRQ is gone and every buffer is back.
 */
class ReceivePoolTest {
  private static final int SIZE = 1024;
  private static final int CAP = 256; // chunks of 16 buffers
  private static final int HEADROOM = 10;
  /** The trims the pools scheduled on their loop, run by hand here. */
  private final java.util.List<Runnable> trims = new java.util.ArrayList<>();
  private final RdmaContext context = new InMemoryProvider().open("mem0");
  private final ProtectionDomain pd = context.allocateProtectionDomain();
  private final AtomicInteger pdReleases = new AtomicInteger();

  @AfterEach
  void close() {
    pd.close(); // fails while a chunk or the SRQ is still there
    context.close();
  }

  private ReceivePool pool(int cap) {
    ReceivePool p = new ReceivePool(pd, SIZE, cap, HEADROOM, this::schedule,
        pdReleases::incrementAndGet);
    p.attach();
    return p;
  }

  @Test
  void theQueueHoldsOneReserveGrantPerMemberAndEveryElasticGrantPlusTheHeadroom() {
    ReceivePool pool = pool(CAP);
    ReceivePool.Member a = pool.join();
    assertThat(pool.posted()).as("nothing promised yet").isZero();
    assertThat(a.promise(1)).isEqualTo(1);
    assertThat(pool.posted()).as("a member's first grant is posted").isEqualTo(1 + HEADROOM);
    assertThat(a.promise(2)).isEqualTo(2);
    assertThat(pool.posted()).as("its other two reserve grants are backed, not posted").isEqualTo(1 + HEADROOM);
    assertThat(a.promise(3)).isEqualTo(3);
    assertThat(pool.posted()).as("elastic grants are posted, every one").isEqualTo(4 + HEADROOM);
    assertThat(a.arrived(0)).as("within its grants").isNotNull();
    assertThat(pool.posted()).as("refilled at once: one less promised, the headroom kept").isEqualTo(3 + HEADROOM);
    a.unpromise(3);
    assertThat(pool.posted()).as("more posted than needed: nothing is taken back").isEqualTo(3 + HEADROOM);
    a.give(0);
    assertThat(pool.posted()).as("the queue is full enough: the buffer goes to the slab").isEqualTo(3 + HEADROOM);
    assertThat(pool.registeredBytes()).isEqualTo(16L * SIZE);
    a.leave();
    assertThat(pool.detach()).isTrue();
    assertThat(pdReleases).as("SRQ gone, nothing held: slab and PD lease go").hasValue(1);
  }

  @Test
  void manyIdleMembersCostOneReceiveEachNotTheirWholeReserve() {
    ReceivePool pool = pool(CAP);
    java.util.List<ReceivePool.Member> members = new java.util.ArrayList<>();
    int n = (CAP - HEADROOM) / ReceivePool.GUARANTEED; // as many as the capacity backs: 82
    for (int i = 0; i < n; i++) {
      ReceivePool.Member m = pool.join();
      assertThat(m.promise(ReceivePool.GUARANTEED)).isEqualTo(ReceivePool.GUARANTEED);
      members.add(m);
    }
    assertThat(pool.posted()).as("idle members with demand, each granted its reserve and one more")
        .isEqualTo(n + HEADROOM);
    assertThat(pool.registeredBytes()).as("what is posted is what is registered, in chunks of 16, 16, 32, 64:"
            + " under twice what is posted, and under the members' whole reserves")
        .isEqualTo(128L * SIZE)
        .isLessThan(2L * (n + HEADROOM) * SIZE)
        .isLessThan((long) n * ReceivePool.GUARANTEED * SIZE);
    assertThatThrownBy(pool::join).as("capacity counts every member's whole guarantee, posted or not")
        .isInstanceOf(ConnectionException.class);
    members.forEach(ReceivePool.Member::leave);
    pool.detach();
    assertThat(pdReleases).hasValue(1);
  }

  @Test
  void aSendBeyondTheGrantsIsNotCovered() {
    ReceivePool pool = pool(CAP);
    ReceivePool.Member a = pool.join();
    assertThat(a.promise(1)).isEqualTo(1);
    assertThat(a.arrived(0)).isNotNull();
    assertThat(a.arrived(1)).as("no grant left").isNull();
    a.give(0);
    a.give(1);
    a.leave();
    pool.detach();
    assertThat(pdReleases).hasValue(1);
  }

  @Test
  void elasticGrantsStopAtTheCapAndEveryMemberKeepsItsGuarantee() {
    ReceivePool pool = pool(32); // chunks of 2 buffers
    ReceivePool.Member a = pool.join();
    ReceivePool.Member b = pool.join();
    // 32 buffers: the headroom and both guarantees stay; a borrows the rest.
    int elastic = 32 - HEADROOM - 2 * ReceivePool.GUARANTEED;
    assertThat(a.promise(1000)).isEqualTo(ReceivePool.GUARANTEED + elastic);
    assertThat(pool.posted()).as("every grant but two of the reserve posted, plus the headroom")
        .isEqualTo(1 + elastic + HEADROOM);
    assertThatThrownBy(pool::join).as("lent out: no guarantee for a third").isInstanceOf(ConnectionException.class);
    assertThat(b.promise(ReceivePool.GUARANTEED)).as("b's guarantee stays backed").isEqualTo(ReceivePool.GUARANTEED);
    assertThat(b.promise(1)).as("nothing beyond it is left").isZero();
    assertThat(pool.posted()).as("the slab is all posted but each member's two unposted reserve grants")
        .isEqualTo(32 - 2 * Protocol.RESERVE);
    a.unpromise(elastic);
    assertThat(b.promise(5)).as("a gave its elastic grants back").isEqualTo(5);
    a.leave();
    b.leave();
    pool.detach();
    assertThat(pdReleases).hasValue(1);
  }

  /** The pools' timer here: the task waits in {@link #trims} until run by hand or cancelled. */
  private reactor.core.Disposable schedule(Runnable task, java.time.Duration delay) {
    trims.add(task);
    return () -> trims.remove(task);
  }

  /** Runs the trim the pool scheduled, as its loop would after a period; false when none was. */
  private boolean runTrim() {
    if (trims.isEmpty()) {
      return false;
    }
    trims.removeFirst().run();
    return true;
  }

  @Test
  void receivesGivenBackKeepTheirChunksUntilTheTrimsAfterThePeak() {
    ReceivePool pool = pool(CAP);
    ReceivePool.Member a = pool.join();
    assertThat(a.promise(100)).isEqualTo(100);
    long peak = pool.registeredBytes();
    assertThat(peak).as("chunks of 16, 16, 32, 64 back what is posted").isEqualTo(128L * SIZE);
    assertThat(trims).as("a trim is due once the slab grew past a base chunk").hasSize(1);
    for (int i = 0; i < 100; i++) { // the peer spends every grant; the member holds each buffer
      assertThat(a.arrived(i)).isNotNull();
    }
    for (int i = 0; i < 100; i++) {
      a.give(i);
    }
    assertThat(pool.registeredBytes()).as("the buffers came back: their chunks stay until a trim").isEqualTo(peak);
    assertThat(runTrim()).isTrue();
    long first = pool.registeredBytes();
    assertThat(first).as("the first trim keeps room for its period's peak (100 held, more posted)")
        .isGreaterThanOrEqualTo((100L + HEADROOM) * SIZE).isLessThanOrEqualTo(peak);
    assertThat(runTrim()).isTrue();
    assertThat(pool.registeredBytes()).as("the next one keeps what is posted now, in few chunks")
        .isLessThan(first).isGreaterThanOrEqualTo((long) pool.posted() * SIZE);
    assertThat(trims).as("the chunk that holds the posted receives is beyond a base chunk: trims go on").hasSize(1);
    a.leave();
    assertThat(pool.detach()).isTrue();
    assertThat(pool.registeredBytes()).isZero();
    assertThat(trims).as("the trim due was cancelled with the slab: it holds no loop").isEmpty();
  }

  @Test
  void aLoopThatCannotBackOneMoreGuaranteeRefusesNamingTheOption() {
    ReceivePool pool = pool(32);
    int members = (32 - HEADROOM) / ReceivePool.GUARANTEED;
    ReceivePool.Member[] m = new ReceivePool.Member[members];
    for (int i = 0; i < members; i++) {
      m[i] = pool.join();
    }
    assertThatThrownBy(pool::join).isInstanceOf(ConnectionException.class)
        .hasMessageContaining("LOOP_RECEIVE_BUFFERS")
        .satisfies(e -> assertThat(((ConnectionException) e).reason()).isEqualTo(ConnectionException.Reason.REFUSED));
    m[0].leave();
    m[0] = pool.join(); // a guarantee freed is a guarantee to give
    for (ReceivePool.Member x : m) {
      x.leave();
    }
    pool.detach();
  }

  @Test
  void aBufferHeldPastTheQueuesEndKeepsItsMemoryNotItsRegistrationUntilItComesBack() {
    ReceivePool pool = pool(CAP);
    ReceivePool.Member a = pool.join();
    a.promise(2);
    a.arrived(0);
    a.leave();
    assertThat(pool.detach()).isTrue();
    assertThat(pdReleases).as("unpinned, the PD lease given back").hasValue(1);
    assertThat(pool.registeredBytes()).isZero();
    java.lang.foreign.MemorySegment held = pool.memory(0);
    held.set(java.lang.foreign.ValueLayout.JAVA_INT, pool.offset(0), 42);
    assertThat(held.get(java.lang.foreign.ValueLayout.JAVA_INT, pool.offset(0))).as("buffer 0, still held, still readable")
        .isEqualTo(42);
    a.give(0);
    assertThat(held.scope().isAlive()).as("its memory goes with the last buffer back").isFalse();
    assertThatThrownBy(pool::join).isInstanceOf(ConnectionException.class);
  }

  @Test
  void aCapThatCannotHoldOneConnectionFailsNamingTheOption() {
    assertThatThrownBy(() -> new ReceivePool(pd, SIZE, HEADROOM, HEADROOM, this::schedule,
        pdReleases::incrementAndGet))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("LOOP_RECEIVE_BUFFERS");
  }
}
