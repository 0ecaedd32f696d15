package io.rdmareactive.rdma.rdmacore;

import static io.rdmareactive.rdma.rdmacore.VerbsLayout.*;

import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.ThreadDomain;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** A thread domain (ibv_alloc_td / ibv_dealloc_td through struct verbs_context). */
final class NativeThreadDomain extends AbstractRdmaResource implements ThreadDomain, NativeContextBound {
  private final NativeContext context;
  final MemorySegment td;

  private NativeThreadDomain(NativeContext context, MemorySegment td) {
    super("ThreadDomain[" + context.deviceName() + "]", context);
    this.context = context;
    this.td = td;
  }

  static NativeThreadDomain allocate(NativeContext context) {
    MemorySegment fn = context.extendedOp(VERBS_CONTEXT_ALLOC_TD, "ibv_alloc_td");
    MemorySegment td;
    try (Arena a = Arena.ofConfined()) {
      MemorySegment attr = a.allocate(SIZEOF_TD_INIT_ATTR, 8); // comp_mask 0
      td = Native.created("ibv_alloc_td", InlineVerbs.createExtended(fn, context.ctx, attr));
    }
    try {
      return new NativeThreadDomain(context, td);
    } catch (RuntimeException | Error e) {
      dealloc(context, td);
      throw e;
    }
  }

  private static int dealloc(NativeContext context, MemorySegment td) {
    MemorySegment fn = context.extendedOpOrNull(VERBS_CONTEXT_DEALLOC_TD);
    return fn == null ? io.rdmareactive.rdma.NativeCallException.EOPNOTSUPP
        : InlineVerbs.destroyExtended(fn, td);
  }

  @Override
  public NativeContext nativeContext() {
    return context;
  }

  @Override
  public RdmaContext context() {
    return context;
  }

  @Override
  protected void release() {
    Native.checkReturn(closeFunction(), dealloc(context, td));
  }

  @Override
  protected String closeFunction() {
    return "ibv_dealloc_td";
  }
}
