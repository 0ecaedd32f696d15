package io.rdmareactive.rdma.verbs;

import java.util.Set;

/** Memory access rights (enum ibv_access_flags). */
public enum Access {
  /** IBV_ACCESS_LOCAL_WRITE: the device may write the memory (needed for receives and RDMA READ targets). */
  LOCAL_WRITE(1),
  /** IBV_ACCESS_REMOTE_WRITE: peers may RDMA WRITE into it. */
  REMOTE_WRITE(2),
  /** IBV_ACCESS_REMOTE_READ: peers may RDMA READ it. */
  REMOTE_READ(4),
  /** IBV_ACCESS_REMOTE_ATOMIC: peers may run atomic operations on it. */
  REMOTE_ATOMIC(8),
  /**
   * IBV_ACCESS_MW_BIND: memory windows may be bound to it. A region registered with this and no
   * remote right opens nothing by its own key: only a window bound to a range of it does.
   */
  MW_BIND(16);

  private final int bit;

  Access(int bit) {
    this.bit = bit;
  }

  /** The flag's bit in {@code ibv_access_flags}. */
  public int bit() {
    return bit;
  }

  /** The {@code ibv_access_flags} mask of {@code access}. */
  public static int mask(Set<Access> access) {
    int m = 0;
    for (Access a : access) {
      m |= a.bit;
    }
    return m;
  }

  /** Local write only: what receive and send buffers need. */
  public static Set<Access> local() {
    return Set.of(LOCAL_WRITE);
  }

  /** Everything: local write and remote read/write. */
  public static Set<Access> remote() {
    return Set.of(LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ);
  }
}
