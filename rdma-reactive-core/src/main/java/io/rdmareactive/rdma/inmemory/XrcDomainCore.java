package io.rdmareactive.rdma.inmemory;

import org.jspecify.annotations.Nullable;

/** An XRC domain, shared by every handle opened for the same file inode (or private: key null). */
final class XrcDomainCore {
  final @Nullable Object key;
  int handles = 1; // guarded by Fabric.LOCK

  XrcDomainCore(@Nullable Object key) {
    this.key = key;
  }

  /** Drops one handle; the last one unregisters the domain. */
  void unref() {
    synchronized (Fabric.LOCK) {
      if (--handles == 0 && key != null) {
        Fabric.XRC_DOMAINS.remove(key);
      }
    }
  }
}
