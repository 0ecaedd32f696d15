package io.rdmareactive.rdma.verbs;

/** A PD bound to a thread domain (ibv_alloc_parent_domain); released like a PD (ibv_dealloc_pd). */
public interface ParentDomain extends ProtectionDomain {
  /** The protection domain it was allocated on. */
  ProtectionDomain protectionDomain();

  /** The thread domain it was allocated with. */
  ThreadDomain threadDomain();
}
