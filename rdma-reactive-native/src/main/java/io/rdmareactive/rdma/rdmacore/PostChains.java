package io.rdmareactive.rdma.rdmacore;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The work-request flyweights one queue pair chains for a batch post (ibv_send_wr and
 * ibv_recv_wr linked through {@code next}), grown to the largest batch seen and then reused: a
 * post allocates nothing once the chain is long enough.
 */
final class PostChains {
  private final Arena arena;
  private SendWr[] sends = new SendWr[0];
  private RecvWr[] receives = new RecvWr[0];

  PostChains(Arena arena) {
    this.arena = arena;
  }

  /** At least {@code n} send flyweights with room for {@code maxSge} entries each. */
  SendWr[] sends(int n, int maxSge) {
    if (sends.length < n) {
      SendWr[] grown = java.util.Arrays.copyOf(sends, Math.max(n, sends.length * 2));
      for (int i = sends.length; i < grown.length; i++) {
        grown[i] = new SendWr(arena, maxSge);
      }
      sends = grown;
    }
    return sends;
  }

  /** At least {@code n} receive flyweights with room for {@code maxSge} entries each. */
  RecvWr[] receives(int n, int maxSge) {
    if (receives.length < n) {
      RecvWr[] grown = java.util.Arrays.copyOf(receives, Math.max(n, receives.length * 2));
      for (int i = receives.length; i < grown.length; i++) {
        grown[i] = new RecvWr(arena, maxSge);
      }
      receives = grown;
    }
    return receives;
  }

  /**
   * The position of {@code bad} (what bad_wr points at) in the first {@code n} of {@code chain};
   * {@code n} when it is none of them (a provider that did not set it): then all count as posted,
   * so the ledger keeps their slots and the CQ cannot overflow; a caller waiting for their
   * completions has its own deadline (a close's flush wait).
   */
  static int indexOf(ChainedWr[] chain, int n, MemorySegment bad) {
    for (int i = 0; i < n; i++) {
      if (chain[i].segment().address() == bad.address()) {
        return i;
      }
    }
    return n;
  }
}
