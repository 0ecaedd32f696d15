package io.rdmareactive.rdma.inmemory;

import io.rdmareactive.rdma.spi.AbstractMemoryRegion;
import io.rdmareactive.rdma.verbs.Access;
import java.lang.foreign.MemorySegment;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/** Memory registered on the in-memory fabric: its key (lkey == rkey) names it in the fabric's registry. */
final class MemMemoryRegion extends AbstractMemoryRegion {
  private final Fabric fabric;
  private final MemProtectionDomain scope;
  private final MemorySegment segment;
  private final Set<Access> access;
  private final int key;

  /** {@code access} is checked and immutable (AbstractMemoryRegion.checkRegistration). */
  MemMemoryRegion(MemProtectionDomain pd, MemorySegment segment, Set<Access> access) {
    this(pd, segment, access, pd.fabric.nextKey());
  }

  private MemMemoryRegion(MemProtectionDomain pd, MemorySegment segment, Set<Access> access, int key) {
    super("in-memory MR of " + segment.byteSize() + " bytes", pd, segment, access, key, key);
    this.fabric = pd.fabric;
    this.scope = pd.scope();
    this.segment = segment;
    this.access = access;
    this.key = key;
    synchronized (fabric.lock) {
      fabric.regions.put(key, this);
    }
    fabric.created("mr");
  }

  /**
   * The slice [address, address + length) of the region {@code key} names, when it lies inside it,
   * the region is in {@code scope} (null: any) and grants {@code needed}; else null. Holds fabric.lock.
   */
  static @Nullable MemorySegment resolve(Fabric fabric, int key, long address, long length, @Nullable MemProtectionDomain scope,
      @Nullable Access needed) {
    MemMemoryRegion mr = fabric.regions.get(key);
    if (mr == null || (scope != null && mr.scope != scope) || (needed != null && !mr.access.contains(needed))) {
      return null;
    }
    long base = mr.segment.address();
    if (length < 0 || address < base || address + length > base + mr.segment.byteSize()) {
      return null;
    }
    return mr.segment.asSlice(address - base, length);
  }

  /** Its key (lkey == rkey), what the fabric's registry knows it by. */
  int key() {
    return key;
  }

  /** The PD whose objects may use it. */
  MemProtectionDomain scope() {
    return scope;
  }

  @Override
  protected void release() {
    synchronized (fabric.lock) {
      fabric.regions.remove(key);
    }
    fabric.released("mr");
  }

  @Override
  protected String closeFunction() {
    return "ibv_dereg_mr";
  }

  /** Gathers {@code src} in order and scatters it over {@code dst}, up to the shorter total. */
  static void copy(MemorySegment[] src, MemorySegment[] dst) {
    int si = 0;
    int di = 0;
    long so = 0;
    long dof = 0;
    while (si < src.length && di < dst.length) {
      long n = Math.min(src[si].byteSize() - so, dst[di].byteSize() - dof);
      if (n > 0) {
        MemorySegment.copy(src[si], so, dst[di], dof, n);
      }
      so += n;
      dof += n;
      if (so == src[si].byteSize()) {
        si++;
        so = 0;
      }
      if (dof == dst[di].byteSize()) {
        di++;
        dof = 0;
      }
    }
  }
}
