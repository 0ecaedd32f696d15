package io.rdmareactive.rdma.verbs;

import java.util.Set;

/** Memory access rights (enum ibv_access_flags). */
public enum Access {
  LOCAL_WRITE(1), REMOTE_WRITE(2), REMOTE_READ(4), REMOTE_ATOMIC(8);

  private final int bit;

  Access(int bit) {
    this.bit = bit;
  }

  public int bit() {
    return bit;
  }

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
