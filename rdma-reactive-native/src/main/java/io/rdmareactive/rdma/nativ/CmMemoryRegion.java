package io.rdmareactive.rdma.nativ;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.rdmareactive.rdma.internal.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Set;

/**
 * Memory registered on a CM endpoint's PD (rdma_reg_msgs / rdma_reg_read / rdma_reg_write, which
 * are ibv_reg_mr on id->pd). Holds a lease on the endpoint: the endpoint cannot be destroyed while
 * this is registered. Closing deregisters (rdma_dereg_mr = ibv_dereg_mr).
 */
final class CmMemoryRegion extends AbstractRdmaResource implements MemoryRegion {
  private final MemorySegment mr;
  private final MemorySegment segment;
  private final Set<Access> access;
  private final int lkey;
  private final int rkey;

  private CmMemoryRegion(CmEndpoint endpoint, MemorySegment mr, MemorySegment segment, Set<Access> access) {
    super("memory region of " + segment.byteSize() + " bytes on " + endpoint, endpoint);
    this.mr = mr.reinterpret(VerbsLayout.SIZEOF_MR);
    this.segment = segment;
    this.access = access;
    this.lkey = this.mr.get(JAVA_INT, VerbsLayout.MR_LKEY);
    this.rkey = this.mr.get(JAVA_INT, VerbsLayout.MR_RKEY);
  }

  /** ibv_reg_mr(pd, segment, access); {@code function} names the rdma_reg_* helper in errors. */
  static CmMemoryRegion register(CmEndpoint endpoint, MemorySegment pd, MemorySegment segment, Set<Access> access,
      String function) {
    if (!segment.isNative()) {
      throw new IllegalArgumentException(function + ": heap memory cannot be registered, use a native segment");
    }
    if (segment.byteSize() == 0) {
      throw new IllegalArgumentException(function + ": cannot register an empty segment");
    }
    MemorySegment mr;
    try {
      mr = Ibverbs.regMr(pd, segment, segment.byteSize(),
          Access.mask(access));
    } catch (Throwable t) {
      throw RdmaCm.rethrow(t);
    }
    if (mr.equals(MemorySegment.NULL)) {
      throw Native.failure(function, Native.lastErrno(), segment.byteSize() + " bytes");
    }
    try {
      return new CmMemoryRegion(endpoint, mr, segment, Set.copyOf(EnumSet.copyOf(access)));
    } catch (RuntimeException e) { // the endpoint closed meanwhile: do not leak the registration
      try {
        int ignored = Ibverbs.deregMr(mr);
      } catch (Throwable t) {
        e.addSuppressed(t);
      }
      throw e;
    }
  }

  /** The struct ibv_mr*. */
  MemorySegment handle() {
    ensureOpen();
    return mr;
  }

  int lkey() {
    return lkey;
  }

  @Override
  public MemorySegment segment() {
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
    return lkey;
  }

  @Override
  public int remoteKey() {
    return rkey;
  }

  @Override
  public Set<Access> access() {
    return access;
  }

  @Override
  protected void release() {
    int rc;
    try {
      rc = Ibverbs.deregMr(mr);
    } catch (Throwable t) {
      throw RdmaCm.rethrow(t);
    }
    Native.checkReturn("rdma_dereg_mr", rc);
  }

  @Override
  protected String closeFunction() {
    return "rdma_dereg_mr";
  }
}
