package io.rdmareactive.rdma.rdmacore;

import static io.rdmareactive.rdma.rdmacore.VerbsLayout.*;
import static java.lang.foreign.ValueLayout.ADDRESS;

import io.rdmareactive.rdma.verbs.ParentDomain;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.ThreadDomain;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.jspecify.annotations.Nullable;

/**
 * A parent domain (ibv_alloc_parent_domain through struct verbs_context): a PD bound to a thread
 * domain, usable wherever a PD is (it is one, natively), released with ibv_dealloc_pd. It holds
 * leases on both its PD and its thread domain.
 */
final class NativeParentDomain extends NativeProtectionDomain implements ParentDomain {
  private final NativeProtectionDomain protectionDomain;
  private final @Nullable NativeThreadDomain threadDomain;

  private NativeParentDomain(NativeProtectionDomain pd, @Nullable NativeThreadDomain td, MemorySegment parent) {
    super(pd.context, pd, parent, "ParentDomain[" + pd.context.deviceName() + "]");
    this.protectionDomain = pd;
    this.threadDomain = td;
  }

  /** {@code td} may be null (the C API allows a parent domain without a thread domain). */
  static NativeParentDomain allocate(NativeProtectionDomain pd, @Nullable NativeThreadDomain td) {
    pd.ensureOpen();
    NativeContext context = pd.context;
    if (td != null) {
      context.checkOwn(td, "thread domain");
    }
    MemorySegment fn = context.extendedOp(VERBS_CONTEXT_ALLOC_PARENT_DOMAIN, "ibv_alloc_parent_domain");
    if (td != null) {
      td.acquireLease();
    }
    MemorySegment parent = null;
    try (Arena a = Arena.ofConfined()) {
      // {pd, td, comp_mask = 0, alloc = NULL, free = NULL, pd_context = NULL}: the provider allocates.
      MemorySegment attr = a.allocate(SIZEOF_PARENT_DOMAIN_INIT_ATTR, 8);
      attr.set(ADDRESS, PARENT_DOMAIN_INIT_ATTR_PD, pd.pd);
      attr.set(ADDRESS, PARENT_DOMAIN_INIT_ATTR_TD, td == null ? MemorySegment.NULL : td.td);
      parent = Native.created("ibv_alloc_parent_domain", InlineVerbs.createExtended(fn, context.ctx, attr));
      return new NativeParentDomain(pd, td, parent);
    } catch (RuntimeException | Error e) {
      if (parent != null) {
        Ibverbs.deallocPd(parent);
      }
      if (td != null) {
        td.releaseLease();
      }
      throw e;
    }
  }

  @Override
  public ProtectionDomain protectionDomain() {
    return protectionDomain;
  }

  @Override
  public ThreadDomain threadDomain() {
    if (threadDomain == null) {
      throw new IllegalStateException(this + " was allocated without a thread domain");
    }
    return threadDomain;
  }

  @Override
  protected void release() {
    super.release(); // ibv_dealloc_pd
    if (threadDomain != null) {
      threadDomain.releaseLease();
    }
  }
}
