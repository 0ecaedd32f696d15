package io.rdmareactive.rdma.inmemory;

import io.rdmareactive.rdma.internal.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Set;
import org.jspecify.annotations.Nullable;

final class MemMemoryRegion extends AbstractRdmaResource implements MemoryRegion {
  private final Fabric fabric;
  private final MemProtectionDomain scope;
  private final MemorySegment segment;
  private final Set<Access> access;
  private final int key;

  MemMemoryRegion(MemProtectionDomain pd, MemorySegment segment, Set<Access> access) {
    super("in-memory MR of " + segment.byteSize() + " bytes", pd);
    this.fabric = pd.fabric;
    this.scope = pd.scope();
    this.segment = segment;
    this.access = access.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(access));
    this.key = fabric.nextKey();
    synchronized (fabric.lock) {
      fabric.regions.put(key, this);
    }
    fabric.created("mr");
  }

  @Override
  public MemorySegment segment() {
    ensureOpen();
    return segment;
  }

  @Override
  public long address() {
    return segment.address();
  }

  @Override
  public long length() {
    return segment.byteSize();
  }

  @Override
  public int localKey() {
    return key;
  }

  @Override
  public int remoteKey() {
    return key;
  }

  @Override
  public Set<Access> access() {
    return access;
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
}
