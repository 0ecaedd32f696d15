package io.rdmareactive.rdma.inmemory;

import org.jspecify.annotations.Nullable;

/** An XRC domain, shared by every handle opened for the same file inode (or private: key null). */
final class MemXrcDomainState {
  private final Fabric fabric;
  final @Nullable Object key;
  int handles = 1; // guarded by fabric.lock

  MemXrcDomainState(Fabric fabric, @Nullable Object key) {
    this.fabric = fabric;
    this.key = key;
  }

  /** Drops one handle; the last one unregisters the domain. */
  void unref() {
    synchronized (fabric.lock) {
      if (--handles == 0 && key != null) {
        fabric.xrcDomains.remove(key);
      }
    }
  }
}
