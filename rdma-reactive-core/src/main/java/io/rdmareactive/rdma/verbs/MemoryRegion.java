package io.rdmareactive.rdma.verbs;

import java.lang.foreign.MemorySegment;
import java.util.Set;

/** Registered memory (ibv_reg_mr). Keys are what work requests and peers name it by. */
public interface MemoryRegion extends RdmaResource {
  MemorySegment segment();

  long address();

  long length();

  int localKey();

  int remoteKey();

  Set<Access> access();
}
