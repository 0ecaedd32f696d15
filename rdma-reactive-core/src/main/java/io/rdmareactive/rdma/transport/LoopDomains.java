package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.spi.ConnectionProvider;
import io.rdmareactive.rdma.spi.ProtectionDomainSource;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The protection domains of one {@link RdmaLoopResources}: one per provider and device, shared by
 * every connection on those resources and by the memory their users register to send from.
 *
 * <p>Per loop resources rather than per process, for lifetime: a PD can only be freed once nothing
 * is registered on it, so it needs an owner that users can dispose; the resources are that owner,
 * as they are already for the loops' completion channels. A PD is allocated with its first user
 * and freed when its last connection goes, unless a user {@link #pin pinned} it: then it stays
 * until the resources are disposed (the process-wide {@link RdmaLoopResources#shared()}, never
 * disposed, keeps a pinned PD for the life of the process, as librdmacm keeps its own).
 */
final class LoopDomains {
  private static final Logger log = Loggers.getLogger(LoopDomains.class);

  private final String owner;
  private final Map<String, Entry> byKey = new HashMap<>();
  private final Map<ProtectionDomain, Entry> byPd = new IdentityHashMap<>();
  private boolean disposed;

  LoopDomains(String owner) {
    this.owner = owner;
  }

  /** Where endpoints of {@code provider} get their PD: the shared one, or null where the provider has none. */
  ProtectionDomainSource source(ConnectionProvider provider) {
    return new ProtectionDomainSource() {
      @Override
      public @Nullable ProtectionDomain acquire(String deviceName) {
        Entry e = entry(provider, deviceName, false);
        return e == null ? null : e.pd;
      }

      @Override
      public void release(ProtectionDomain pd) {
        LoopDomains.this.release(pd);
      }
    };
  }

  /** The PD for {@code deviceName}, kept until {@link #dispose}; fails where the provider cannot share one. */
  ProtectionDomain pin(ConnectionProvider provider, String deviceName) {
    Entry e = entry(provider, deviceName, true);
    if (e == null) {
      throw new UnsupportedOperationException(provider.getClass().getSimpleName()
          + " cannot share a protection domain among its connections");
    }
    return e.pd;
  }

  private synchronized @Nullable Entry entry(ConnectionProvider provider, String deviceName, boolean pin) {
    if (disposed) {
      throw new IllegalStateException(owner + " is disposed");
    }
    String key = provider.getClass().getName() + "/" + deviceName;
    Entry e = byKey.get(key);
    if (e == null) {
      ProtectionDomain pd;
      try {
        pd = provider.allocateProtectionDomain(deviceName);
      } catch (UnsupportedOperationException unsupported) {
        return null;
      }
      e = new Entry(key, pd);
      byKey.put(key, e);
      byPd.put(pd, e);
    }
    if (pin) {
      e.pinned = true;
    } else {
      e.users++;
    }
    return e;
  }

  /** One more lease on {@code pd} (a receive pool's slab registered on it); false when it is not one of these PDs. */
  synchronized boolean retain(ProtectionDomain pd) {
    Entry e = byPd.get(pd);
    if (e == null) {
      return false;
    }
    e.users++;
    return true;
  }

  /** Gives back a lease {@link #retain} took. */
  void releaseRetained(ProtectionDomain pd) {
    release(pd);
  }

  private synchronized void release(ProtectionDomain pd) {
    Entry e = byPd.get(pd);
    if (e != null && --e.users == 0 && !e.pinned) {
      free(e);
    }
  }

  /** Unpins every PD; each is freed now, or with its last connection. */
  synchronized void dispose() {
    disposed = true;
    for (Entry e : byKey.values().toArray(new Entry[0])) {
      e.pinned = false;
      if (e.users == 0) {
        free(e);
      }
    }
  }

  /** PDs allocated now. */
  synchronized int size() {
    return byKey.size();
  }

  private void free(Entry e) {
    byKey.remove(e.key);
    byPd.remove(e.pd);
    try {
      e.pd.close();
    } catch (RuntimeException ex) { // memory still registered on it by a user: it stays, with that memory
      log.warn("rdma-reactive: freeing " + e.pd + " of " + owner + " failed", ex);
    }
  }

  private static final class Entry {
    final String key;
    final ProtectionDomain pd;
    int users;
    boolean pinned;

    Entry(String key, ProtectionDomain pd) {
      this.key = key;
      this.pd = pd;
    }
  }
}
