package io.rdmareactive.rdma.rdmacore;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.conformance.Loopback;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.MemoryWindow;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.SendBatch;
import io.rdmareactive.rdma.verbs.SendRequest;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What exposing one message's range to a peer costs on this device, both ways the design weighs
 * (docs/design.md, "Rendezvous by RDMA READ"): a type-2 window bound and invalidated (two work
 * requests in one post, both completions polled) against a registration of the range with remote
 * read and its deregistration. Prints the means; asserts only that every operation succeeded
 * (timing is never asserted: in the VM it measures emulation on a shared host).
 */
@Tag("native")
class NativeMemoryWindowCostTest {
  private static final int[] SIZES = {4096, 64 * 1024, 1024 * 1024};

  @Test
  void printsBindAndInvalidateAgainstRegisterAndDeregister() {
    try (RdmaContext ctx = NativeTestSupport.open();
        Loopback l = new Loopback(ctx, NativeTestSupport.usableGidIndex(ctx), 16, false);
        Arena arena = Arena.ofShared()) {
      MemorySegment memory = arena.allocate(SIZES[SIZES.length - 1], 4096);
      MemoryRegion source = l.pd.registerMemory(memory, EnumSet.of(Access.LOCAL_WRITE, Access.MW_BIND));
      MemoryWindow window = l.pd.allocateMemoryWindow();
      try {
        for (int size : SIZES) {
          int rounds = size >= 1024 * 1024 ? 200 : 1000;
          bindAndInvalidate(l, window, source, size, rounds / 10); // warm-up, not counted
          double windowMicros = bindAndInvalidate(l, window, source, size, rounds);
          registerAndDeregister(l, memory, size, rounds / 10);
          double[] reg = registerAndDeregister(l, memory, size, rounds);
          System.out.printf("memory-window cost on %s, %d B: bind+invalidate %.1f us; reg_mr %.1f us + dereg_mr %.1f us"
              + " (means of %d)%n", ctx.deviceName(), size, windowMicros, reg[0], reg[1], rounds);
        }
      } finally {
        window.close();
        source.close();
      }
    }
  }

  /** Mean microseconds of one bind and one invalidate of {@code size} bytes, posted together, both polled. */
  private static double bindAndInvalidate(Loopback l, MemoryWindow window, MemoryRegion source, int size, int rounds) {
    SendBatch batch = new SendBatch(2, 1);
    long start = System.nanoTime();
    for (int i = 0; i < rounds; i++) {
      SendRequest bind = batch.add().bind(2L * i, window, source, 0, size, Set.of(Access.REMOTE_READ));
      batch.add().invalidate(2L * i + 1, bind.bindKey());
      l.b.postSend(batch);
      batch.clear();
      List<WorkCompletion> wcs = l.pollAtLeast(2);
      assertThat(wcs).hasSize(2).allMatch(WorkCompletion::isSuccess);
    }
    return (System.nanoTime() - start) / 1e3 / rounds;
  }

  /** Mean microseconds of ibv_reg_mr (remote read) and of ibv_dereg_mr of {@code size} bytes. */
  private static double[] registerAndDeregister(Loopback l, MemorySegment memory, int size, int rounds) {
    long reg = 0;
    long dereg = 0;
    for (int i = 0; i < rounds; i++) {
      long t0 = System.nanoTime();
      MemoryRegion mr = l.pd.registerMemory(memory.asSlice(0, size), Set.of(Access.REMOTE_READ));
      long t1 = System.nanoTime();
      mr.close();
      long t2 = System.nanoTime();
      reg += t1 - t0;
      dereg += t2 - t1;
    }
    return new double[] {reg / 1e3 / rounds, dereg / 1e3 / rounds};
  }
}
