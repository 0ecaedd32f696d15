package io.rdmareactive.rdma.verbs;

import java.lang.foreign.MemorySegment;
import java.util.Set;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

/**
 * A protection domain: the scope of memory registrations and queue pairs. A {@link ParentDomain}
 * is accepted everywhere a protection domain is.
 */
public interface ProtectionDomain extends RdmaResource {

  /** The device context the PD belongs to. */
  RdmaContext context();

  /**
   * Registers native memory. Nothing is remotely accessible unless {@code access} says so.
   *
   * @throws IllegalArgumentException when the segment is not native (heap memory cannot be registered)
   */
  MemoryRegion registerMemory(MemorySegment segment, Set<Access> access);

  /** Creates a queue pair (ibv_create_qp), in RESET; its depths are reserved on its CQs. */
  QueuePair createQueuePair(QueuePairOptions options);

  /** Creates a shared receive queue (ibv_create_srq). */
  SharedReceiveQueue createSharedReceiveQueue(SharedReceiveQueueOptions options);

  /**
   * Allocates a type-2 memory window (ibv_alloc_mw with IBV_MW_TYPE_2): a remote key that opens
   * nothing until a bind work request ({@link SendRequest#bind}) on a queue pair of this PD binds
   * it to a range of a region, and nothing again once a local invalidate ({@link
   * SendRequest#invalidate}) revokes it.
   *
   * @throws io.rdmareactive.rdma.NativeCallException when the device has no type-2 windows (errno and function)
   */
  MemoryWindow allocateMemoryWindow();

  /** A parent domain over this PD and {@code threadDomain} (ibv_alloc_parent_domain). */
  ParentDomain allocateParentDomain(ThreadDomain threadDomain);

  /** Registers {@code segment} on subscription, deregisters it when {@code body}'s publisher terminates or is cancelled. */
  default <T> Flux<T> withMemoryRegion(MemorySegment segment, Set<Access> access,
      Function<? super MemoryRegion, ? extends Publisher<T>> body) {
    return Flux.using(() -> registerMemory(segment, access), body, MemoryRegion::close);
  }

  /** Creates a queue pair on subscription, destroys it when {@code body}'s publisher terminates or is cancelled. */
  default <T> Flux<T> withQueuePair(QueuePairOptions options, Function<? super QueuePair, ? extends Publisher<T>> body) {
    return Flux.using(() -> createQueuePair(options), body, QueuePair::close);
  }

  /** Allocates a parent domain on subscription, frees it when {@code body}'s publisher terminates or is cancelled. */
  default <T> Flux<T> withParentDomain(ThreadDomain threadDomain, Function<? super ParentDomain, ? extends Publisher<T>> body) {
    return Flux.using(() -> allocateParentDomain(threadDomain), body, ParentDomain::close);
  }
}
