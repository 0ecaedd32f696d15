package io.rdmareactive.rdma.spi;

import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Set;

/**
 * What every provider's memory region shares: the registration rules, checked before any native
 * call ({@link #checkRegistration}), and accessors that fail with
 * {@link io.rdmareactive.rdma.ResourceClosedException} once the region is deregistered, since its
 * keys then name nothing (or, later, someone else's memory). A subclass supplies the keys and
 * deregisters in {@link #release()}.
 */
public abstract class AbstractMemoryRegion extends AbstractRdmaResource implements MemoryRegion {
  private final MemorySegment segment;
  private final Set<Access> access;
  private final int localKey;
  private final int remoteKey;

  /** A region over {@code segment}, a child of {@code parent} (its PD, or the CM id whose PD it is on). */
  protected AbstractMemoryRegion(String description, AbstractRdmaResource parent, MemorySegment segment,
      Set<Access> access, int localKey, int remoteKey) {
    super(description, parent);
    this.segment = segment;
    this.access = immutable(access);
    this.localKey = localKey;
    this.remoteKey = remoteKey;
  }

  /**
   * The rules of ibv_reg_mr that both providers enforce before registering: the segment must be
   * native (heap memory moves with the GC) and alive, with at least one byte
   * ({@link NativeCallException} EINVAL, as the kernel says), and remote write or atomic access
   * needs LOCAL_WRITE (EINVAL, as the verbs specification says). {@code function} names the
   * registering call in errors.
   *
   * @return {@code access} as an immutable set
   * @throws IllegalArgumentException when the segment is on the heap or its arena is closed
   */
  public static Set<Access> checkRegistration(String function, MemorySegment segment, Set<Access> access) {
    if (!segment.isNative()) {
      throw new IllegalArgumentException(function + ": only native memory can be registered (heap segments move "
          + "with the GC); allocate it from an Arena, got " + segment);
    }
    if (!segment.scope().isAlive()) {
      throw new IllegalArgumentException(function + ": the segment's arena is already closed: " + segment);
    }
    if (segment.byteSize() == 0) {
      throw NativeCallException.of(function, NativeCallException.EINVAL,
          NativeCallException.describe(NativeCallException.EINVAL), "cannot register an empty segment");
    }
    if ((access.contains(Access.REMOTE_WRITE) || access.contains(Access.REMOTE_ATOMIC))
        && !access.contains(Access.LOCAL_WRITE)) {
      throw NativeCallException.of(function, NativeCallException.EINVAL,
          NativeCallException.describe(NativeCallException.EINVAL),
          "remote write or atomic access needs LOCAL_WRITE too, was " + access);
    }
    return immutable(access);
  }

  private static Set<Access> immutable(Set<Access> access) {
    return access.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(access));
  }

  @Override
  public final MemorySegment segment() {
    ensureOpen();
    return segment;
  }

  @Override
  public final long address() {
    ensureOpen();
    return segment.address();
  }

  @Override
  public final long length() {
    ensureOpen();
    return segment.byteSize();
  }

  @Override
  public final int localKey() {
    ensureOpen();
    return localKey;
  }

  @Override
  public final int remoteKey() {
    ensureOpen();
    return remoteKey;
  }

  @Override
  public final Set<Access> access() {
    ensureOpen();
    return access;
  }
}
