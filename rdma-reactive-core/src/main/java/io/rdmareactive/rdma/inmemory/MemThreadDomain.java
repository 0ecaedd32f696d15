package io.rdmareactive.rdma.inmemory;

import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.ThreadDomain;

final class MemThreadDomain extends AbstractRdmaResource implements ThreadDomain, MemContext.Owned {
  private final MemContext context;
  private final Fabric fabric;

  MemThreadDomain(MemContext context) {
    super("in-memory thread domain #" + context.fabric.nextHandle(), context);
    this.context = context;
    this.fabric = context.fabric;
    fabric.created("td");
  }

  @Override
  public MemContext context() {
    return context;
  }

  @Override
  protected void release() {
    fabric.released("td");
  }

  @Override
  protected String closeFunction() {
    return "ibv_dealloc_td";
  }
}
