package io.rdmareactive.rdma.verbs;

/** A thread domain (ibv_alloc_td): a promise that one thread uses the objects bound to it, so the provider may drop locks. */
public interface ThreadDomain extends RdmaResource {
  /** The device context the thread domain belongs to. */
  RdmaContext context();
}
