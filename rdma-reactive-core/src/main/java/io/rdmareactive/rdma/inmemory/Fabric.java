package io.rdmareactive.rdma.inmemory;

import io.rdmareactive.rdma.NativeCallException;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One "wire": QP, SRQ, memory-key and listener registries, and one lock that every data-path
 * operation takes. One lock keeps delivery (which touches sender, receiver and both CQs) free of
 * lock-ordering problems; it is never held while user code runs or while waiting.
 *
 * <p>Objects on different fabrics never see each other. {@link #SHARED} serves every provider made
 * by its public constructors (the embedded use: one process, one fabric); a test that wants
 * isolation makes a provider with a fabric of its own ({@link InMemoryProvider#create()}).
 */
final class Fabric {
  /** The process-wide fabric of the providers that ServiceLoader and the public constructors make. */
  static final Fabric SHARED = new Fabric();

  /** Guards every mutable field of every in-memory verbs object on this fabric that the data path touches. */
  final Object lock = new Object();

  private final AtomicInteger nextQpn = new AtomicInteger(0x100);
  private final AtomicInteger nextSrqn = new AtomicInteger(0x40);
  private final AtomicInteger nextKey = new AtomicInteger(0x1000);
  private final AtomicInteger nextHandle = new AtomicInteger(1);
  private final AtomicInteger nextPort = new AtomicInteger(20_000);

  /** Guarded by lock. */
  final Map<Integer, MemQueuePairState> queuePairs = new HashMap<>();
  /** XRC SRQs by number. Guarded by lock. */
  final Map<Integer, MemSharedReceiveQueue> xrcSrqs = new HashMap<>();
  /** Memory regions by key (lkey == rkey here). Guarded by lock. */
  final Map<Integer, MemMemoryRegion> regions = new HashMap<>();
  /** Memory windows by key without its low 8 bits (the part a bind leaves). Guarded by lock. */
  final Map<Integer, MemMemoryWindow> windows = new HashMap<>();
  /** Shared XRC domains by (device, file key). Guarded by lock. */
  final Map<Object, MemXrcDomainState> xrcDomains = new HashMap<>();
  /** Listeners by port: every resolved address reaches this fabric, so the port alone names one. */
  final ConcurrentHashMap<Integer, MemConnectionListener> listeners = new ConcurrentHashMap<>();

  /** Connection endpoints not yet closed, for faults raised on their device. */
  final Set<MemConnectionEndpoint> endpoints = ConcurrentHashMap.newKeySet();

  private final ConcurrentHashMap<String, AtomicInteger> live = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, java.util.concurrent.atomic.AtomicLong> made = new ConcurrentHashMap<>();

  int nextQpNumber() {
    return nextQpn.getAndIncrement() & 0xFFFFFF;
  }

  int nextSrqNumber() {
    return nextSrqn.getAndIncrement() & 0xFFFFFF;
  }

  int nextKey() {
    return nextKey.getAndIncrement();
  }

  int nextHandle() {
    return nextHandle.getAndIncrement();
  }

  /** A port for a listener on port 0, cycling through 20000..60999. */
  int nextPort() {
    return nextPort.getAndUpdate(p -> p >= 60_999 ? 20_000 : p + 1);
  }

  void created(String type) {
    live.computeIfAbsent(type, t -> new AtomicInteger()).incrementAndGet();
    made.computeIfAbsent(type, t -> new java.util.concurrent.atomic.AtomicLong()).incrementAndGet();
  }

  /** Counts a creation that has no live count of its own (a passive endpoint: its parts have theirs). */
  void counted(String type) {
    made.computeIfAbsent(type, t -> new java.util.concurrent.atomic.AtomicLong()).incrementAndGet();
  }

  /** Objects created so far by type, released or not, sorted by type. */
  Map<String, Long> made() {
    Map<String, Long> m = new TreeMap<>();
    made.forEach((k, v) -> m.put(k, v.get()));
    return m;
  }

  void released(String type) {
    live.computeIfAbsent(type, t -> new AtomicInteger()).decrementAndGet();
  }

  /** Non-zero live counts by type, sorted by type. */
  Map<String, Integer> live() {
    Map<String, Integer> m = new TreeMap<>();
    live.forEach((k, v) -> {
      int n = v.get();
      if (n != 0) {
        m.put(k, n);
      }
    });
    return m;
  }

  static NativeCallException failure(String function, int errno, String detail) {
    return NativeCallException.of(function, errno, NativeCallException.describe(errno), detail);
  }
}
