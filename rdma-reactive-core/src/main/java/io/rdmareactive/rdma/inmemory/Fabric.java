package io.rdmareactive.rdma.inmemory;

import io.rdmareactive.rdma.NativeCallException;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The process-wide "wire": QP, SRQ and memory-key registries, and one lock that every data-path
 * operation takes. One lock keeps delivery (which touches sender, receiver and both CQs) free of
 * lock-ordering problems; it is never held while user code runs or while waiting.
 */
final class Fabric {
  /** Guards every mutable field of every in-memory verbs object that the data path touches. */
  static final Object LOCK = new Object();

  private static final AtomicInteger NEXT_QPN = new AtomicInteger(0x100);
  private static final AtomicInteger NEXT_SRQN = new AtomicInteger(0x40);
  private static final AtomicInteger NEXT_KEY = new AtomicInteger(0x1000);
  private static final AtomicInteger NEXT_HANDLE = new AtomicInteger(1);

  /** Guarded by LOCK. */
  static final Map<Integer, QpCore> QUEUE_PAIRS = new HashMap<>();
  /** XRC SRQs by number. Guarded by LOCK. */
  static final Map<Integer, MemSharedReceiveQueue> XRC_SRQS = new HashMap<>();
  /** Memory regions by key (lkey == rkey here). Guarded by LOCK. */
  static final Map<Integer, MemMemoryRegion> REGIONS = new HashMap<>();
  /** Shared XRC domains by (device, file key). Guarded by LOCK. */
  static final Map<Object, XrcDomainCore> XRC_DOMAINS = new HashMap<>();

  private static final ConcurrentHashMap<String, AtomicInteger> LIVE = new ConcurrentHashMap<>();

  private Fabric() {}

  static int nextQpNumber() {
    return NEXT_QPN.getAndIncrement() & 0xFFFFFF;
  }

  static int nextSrqNumber() {
    return NEXT_SRQN.getAndIncrement() & 0xFFFFFF;
  }

  static int nextKey() {
    return NEXT_KEY.getAndIncrement();
  }

  static int nextHandle() {
    return NEXT_HANDLE.getAndIncrement();
  }

  static void created(String type) {
    LIVE.computeIfAbsent(type, t -> new AtomicInteger()).incrementAndGet();
  }

  static void released(String type) {
    LIVE.computeIfAbsent(type, t -> new AtomicInteger()).decrementAndGet();
  }

  /** Non-zero live counts by type, sorted by type. */
  static Map<String, Integer> live() {
    Map<String, Integer> m = new TreeMap<>();
    LIVE.forEach((k, v) -> {
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
