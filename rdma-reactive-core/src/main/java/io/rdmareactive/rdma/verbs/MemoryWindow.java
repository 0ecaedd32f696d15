package io.rdmareactive.rdma.verbs;

/**
 * A type-2 memory window (struct ibv_mw): a remote key of its own, bound by a bind work request
 * ({@link SendRequest#bind}) to exactly one range of a region registered with {@link
 * Access#MW_BIND}, through the queue pair that posted the bind only, and revoked by a local
 * invalidate ({@link SendRequest#invalidate}). Each bind gives the window a new key (its low 8
 * bits advance), so a key revoked once never opens the memory again.
 */
public interface MemoryWindow extends RdmaResource {
  /** The protection domain it was allocated on: only queue pairs of it may bind it. */
  ProtectionDomain protectionDomain();

  /**
   * The key of the latest bind posted ({@link SendRequest#bindKey()}), or, before any, the key it
   * was allocated with, which opens nothing.
   */
  int remoteKey();

  /** The key the next bind gives a window whose key is {@code key}: its low 8 bits advance (ibv_inc_rkey). */
  static int nextKey(int key) {
    return (key & ~0xFF) | ((key + 1) & 0xFF);
  }
}
