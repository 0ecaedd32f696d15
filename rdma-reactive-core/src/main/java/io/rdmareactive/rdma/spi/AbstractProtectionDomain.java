package io.rdmareactive.rdma.spi;

import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.MemoryWindow;
import io.rdmareactive.rdma.verbs.ParentDomain;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.QueuePairOptions;
import io.rdmareactive.rdma.verbs.SharedReceiveQueue;
import io.rdmareactive.rdma.verbs.SharedReceiveQueueOptions;
import io.rdmareactive.rdma.verbs.ThreadDomain;
import java.lang.foreign.MemorySegment;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What every provider's protection domain shares: each factory fails on a closed PD before
 * anything else, and memory registration checks its arguments by
 * {@link AbstractMemoryRegion#checkRegistration} before the provider's part runs.
 */
public abstract class AbstractProtectionDomain extends AbstractRdmaResource implements ProtectionDomain {
  /** A PD described as {@code description} in errors, a dependant of {@code parent} (its context) when there is one. */
  protected AbstractProtectionDomain(String description, @Nullable AbstractRdmaResource parent) {
    super(description, parent);
  }

  @Override
  public final MemoryRegion registerMemory(MemorySegment segment, Set<Access> access) {
    ensureOpen();
    return register(segment, AbstractMemoryRegion.checkRegistration("ibv_reg_mr", segment, access));
  }

  @Override
  public final QueuePair createQueuePair(QueuePairOptions options) {
    ensureOpen();
    return newQueuePair(options);
  }

  @Override
  public final SharedReceiveQueue createSharedReceiveQueue(SharedReceiveQueueOptions options) {
    ensureOpen();
    return newSharedReceiveQueue(options);
  }

  @Override
  public final ParentDomain allocateParentDomain(ThreadDomain threadDomain) {
    ensureOpen();
    return newParentDomain(threadDomain);
  }

  @Override
  public final MemoryWindow allocateMemoryWindow() {
    ensureOpen();
    return newMemoryWindow();
  }

  /** ibv_alloc_mw (type 2) on this open PD. */
  protected abstract MemoryWindow newMemoryWindow();

  /** ibv_reg_mr, with arguments already checked; {@code access} is immutable. */
  protected abstract MemoryRegion register(MemorySegment segment, Set<Access> access);

  /** ibv_create_qp on this open PD. */
  protected abstract QueuePair newQueuePair(QueuePairOptions options);

  /** ibv_create_srq on this open PD. */
  protected abstract SharedReceiveQueue newSharedReceiveQueue(SharedReceiveQueueOptions options);

  /** ibv_alloc_parent_domain over this open PD. */
  protected abstract ParentDomain newParentDomain(ThreadDomain threadDomain);
}
