package io.rdmareactive.rdma.nativ;

import static io.rdmareactive.rdma.nativ.VerbsLayout.*;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.rdmareactive.rdma.internal.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import java.lang.foreign.MemorySegment;
import java.util.Set;

/** Registered memory (ibv_reg_mr / ibv_dereg_mr). Keys are read once from struct ibv_mr. */
final class NativeMemoryRegion extends AbstractRdmaResource implements MemoryRegion {
  private final NativeProtectionDomain pd;
  private final MemorySegment mr;
  private final MemorySegment segment;
  private final Set<Access> access;
  private final long address;
  private final long length;
  private final int lkey;
  private final int rkey;

  NativeMemoryRegion(NativeProtectionDomain pd, MemorySegment mr, MemorySegment segment, Set<Access> access) {
    super("MemoryRegion[" + segment.byteSize() + " bytes at 0x" + Long.toHexString(segment.address()) + "]", pd);
    this.pd = pd;
    this.mr = mr.reinterpret(SIZEOF_MR);
    this.segment = segment;
    this.access = access;
    this.address = this.mr.get(JAVA_LONG, MR_ADDR);
    this.length = this.mr.get(JAVA_LONG, MR_LENGTH);
    this.lkey = this.mr.get(JAVA_INT, MR_LKEY);
    this.rkey = this.mr.get(JAVA_INT, MR_RKEY);
  }

  @Override
  public MemorySegment segment() {
    ensureOpen();
    return segment;
  }

  @Override
  public long address() {
    ensureOpen();
    return address;
  }

  @Override
  public long length() {
    ensureOpen();
    return length;
  }

  @Override
  public int localKey() {
    ensureOpen();
    return lkey;
  }

  @Override
  public int remoteKey() {
    ensureOpen();
    return rkey;
  }

  @Override
  public Set<Access> access() {
    return access;
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
