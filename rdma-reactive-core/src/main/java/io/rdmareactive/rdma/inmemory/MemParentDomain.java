package io.rdmareactive.rdma.inmemory;

import io.rdmareactive.rdma.verbs.ParentDomain;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.ThreadDomain;

/** A PD bound to a thread domain; memory and QPs made through it share its PD's protection scope. */
final class MemParentDomain extends MemProtectionDomain implements ParentDomain {
  private final MemProtectionDomain pd;
  private final MemThreadDomain td;

  MemParentDomain(MemProtectionDomain pd, MemThreadDomain td) {
    super(pd.context, "parent-domain", "in-memory parent domain #" + pd.context.fabric.nextHandle(), pd);
    this.pd = pd;
    this.td = td;
    try {
      td.acquireLease();
    } catch (RuntimeException e) {
      fabric.released("parent-domain");
      abandon();
      throw e;
    }
  }

  @Override
  MemProtectionDomain scope() {
    return pd.scope();
  }

  @Override
  public ProtectionDomain protectionDomain() {
    return pd;
  }

  @Override
  public ThreadDomain threadDomain() {
    return td;
  }

  @Override
  protected void release() {
    super.release();
    td.releaseLease();
  }
}
