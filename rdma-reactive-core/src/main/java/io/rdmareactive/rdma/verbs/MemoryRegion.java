package io.rdmareactive.rdma.verbs;

import java.lang.foreign.MemorySegment;
import java.util.Set;

/** Registered memory (ibv_reg_mr). Keys are what work requests and peers name it by. */
public interface MemoryRegion extends RdmaResource {
  /** The registered memory. */
  MemorySegment segment();

  /** Its start address, as the device sees it. */
  long address();

  /** Its length in bytes. */
  long length();

  /** The key local work requests name it with (lkey). */
  int localKey();

  /** The key a peer names it with in RDMA operations (rkey). */
  int remoteKey();

  /** The access rights it was registered with. */
  Set<Access> access();
}
