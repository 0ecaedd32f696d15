package io.rdmareactive.rdma.rdmacore;

import static io.rdmareactive.rdma.rdmacore.VerbsLayout.*;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.rdmareactive.rdma.spi.AbstractMemoryRegion;
import io.rdmareactive.rdma.verbs.Access;
import java.lang.foreign.MemorySegment;
import java.util.Set;

/** Registered memory (ibv_reg_mr / ibv_dereg_mr). Keys are read once from struct ibv_mr. */
final class NativeMemoryRegion extends AbstractMemoryRegion {
  private final NativeProtectionDomain pd;
  /** struct ibv_mr; never touched after release (every use checks that the region is open). */
  final MemorySegment mr;

  /** {@code access} is checked and immutable (AbstractMemoryRegion.checkRegistration). */
  NativeMemoryRegion(NativeProtectionDomain pd, MemorySegment mr, MemorySegment segment, Set<Access> access) {
    super("MemoryRegion[" + segment.byteSize() + " bytes at 0x" + Long.toHexString(segment.address()) + "]", pd,
        segment, access, key(mr, MR_LKEY), key(mr, MR_RKEY));
    this.pd = pd;
    this.mr = mr.reinterpret(SIZEOF_MR);
  }

  /** A key of struct ibv_mr, read before super() can keep the struct. */
  static int key(MemorySegment mr, long offset) {
    return mr.reinterpret(SIZEOF_MR).get(JAVA_INT, offset);
  }

  @Override
  protected void release() {
    Native.checkReturn(closeFunction(), Ibverbs.deregMr(mr));
  }

  @Override
  protected String closeFunction() {
    return "ibv_dereg_mr";
  }
}
