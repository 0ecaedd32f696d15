package io.rdmareactive.rdma.inmemory;

import io.rdmareactive.rdma.internal.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.ThreadDomain;

final class MemThreadDomain extends AbstractRdmaResource implements ThreadDomain, MemContext.Owned {
  private final MemContext context;

  MemThreadDomain(MemContext context) {
    super("in-memory thread domain #" + Fabric.nextHandle(), context);
    this.context = context;
    Fabric.created("td");
  }

  @Override
  public MemContext context() {
    return context;
  }

  @Override
  protected void release() {
    Fabric.released("td");
  }

  @Override
  protected String closeFunction() {
    return "ibv_dealloc_td";
  }
}
