package io.rdmareactive.rdma.verbs;

/** A PD bound to a thread domain (ibv_alloc_parent_domain); released like a PD (ibv_dealloc_pd). */
public interface ParentDomain extends ProtectionDomain {
  ProtectionDomain protectionDomain();

  ThreadDomain threadDomain();
}
