package io.rdmareactive.rdma.rdmacore;

import io.rdmareactive.rdma.spi.AbstractMemoryRegion;
import io.rdmareactive.rdma.verbs.Access;
import java.lang.foreign.MemorySegment;
import java.util.Set;

/**
 * Memory registered on a CM endpoint's PD (rdma_reg_msgs / rdma_reg_read / rdma_reg_write, which
 * are ibv_reg_mr on id->pd). Holds a lease on the endpoint: the endpoint cannot be destroyed while
 * this is registered. Closing deregisters (rdma_dereg_mr = ibv_dereg_mr).
 */
final class CmMemoryRegion extends AbstractMemoryRegion {
  private final MemorySegment mr;

  private CmMemoryRegion(CmEndpoint endpoint, MemorySegment mr, MemorySegment segment, Set<Access> access) {
    super("memory region of " + segment.byteSize() + " bytes on " + endpoint, endpoint, segment, access,
        NativeMemoryRegion.key(mr, VerbsLayout.MR_LKEY), NativeMemoryRegion.key(mr, VerbsLayout.MR_RKEY));
    this.mr = mr.reinterpret(VerbsLayout.SIZEOF_MR);
  }

  /** ibv_reg_mr(pd, segment, access); {@code function} names the rdma_reg_* helper in errors. */
  static CmMemoryRegion register(CmEndpoint endpoint, MemorySegment pd, MemorySegment segment, Set<Access> access,
      String function) {
    Set<Access> checked = checkRegistration(function, segment, access);
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
      return new CmMemoryRegion(endpoint, mr, segment, checked);
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
    return localKey();
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
