package io.rdmareactive.rdma.inmemory;

import static io.rdmareactive.rdma.verbs.WorkCompletion.Status.LOC_QP_OP_ERR;
import static io.rdmareactive.rdma.verbs.WorkCompletion.Status.MW_BIND_ERR;
import static io.rdmareactive.rdma.verbs.WorkCompletion.Status.SUCCESS;

import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryWindow;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.SendRequest;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import java.lang.foreign.MemorySegment;
import org.jspecify.annotations.Nullable;

/**
 * A type-2 memory window on the in-memory fabric, with rxe's rules (type 2B): a bind needs the
 * window free, on the posting QP's PD, and a range inside a region of that PD registered with
 * MW_BIND; its key then opens that range, with the rights bound, to peers of the binding QP only,
 * until a LOCAL_INV of that key or the window's close. Keys have bit 31 set, so they never name a
 * region (region keys count up from 0x1000).
 */
final class MemMemoryWindow extends AbstractRdmaResource implements MemoryWindow {
  private final Fabric fabric;
  private final MemProtectionDomain pd;
  /** The key without its low 8 bits: what the fabric's registry knows it by. */
  private final int index;
  // Guarded by fabric.lock.
  private volatile int key;
  private @Nullable MemMemoryRegion region;
  private long address;
  private long length;
  private int access;
  private @Nullable MemQueuePairState boundBy;

  MemMemoryWindow(MemProtectionDomain pd) {
    super("in-memory MW #" + pd.fabric.nextHandle(), pd);
    this.fabric = pd.fabric;
    this.pd = pd;
    this.index = 0x8000_0000 | (fabric.nextKey() << 8);
    this.key = index;
    synchronized (fabric.lock) {
      fabric.windows.put(index, this);
    }
    fabric.created("mw");
  }

  @Override
  public ProtectionDomain protectionDomain() {
    return pd;
  }

  @Override
  public int remoteKey() {
    return key;
  }

  /** BIND_MW posted on {@code qp}: the completion status, as rxe's checks give it. Holds fabric.lock. */
  static WorkCompletion.Status bind(Fabric fabric, MemQueuePairState qp, SendRequest r) {
    if (!(r.window() instanceof MemMemoryWindow w) || w.isClosed() || fabric.windows.get(w.index) != w
        || !(r.bindRegion() instanceof MemMemoryRegion mr) || fabric.regions.get(mr.key()) != mr) {
      return MW_BIND_ERR;
    }
    boolean rangeInside = r.bindLength() > 0 && r.bindAddress() >= mr.segment().address()
        && r.bindAddress() + r.bindLength() <= mr.segment().address() + mr.segment().byteSize();
    boolean writeWithoutLocalWrite = (r.bindAccess() & (Access.REMOTE_WRITE.bit() | Access.REMOTE_ATOMIC.bit())) != 0
        && !mr.access().contains(Access.LOCAL_WRITE);
    if (w.boundBy != null || w.pd.scope() != qp.scope || mr.scope() != qp.scope || !mr.access().contains(Access.MW_BIND)
        || !rangeInside || writeWithoutLocalWrite || (r.bindKey() & ~0xFF) != w.index || r.bindKey() == w.key) {
      return MW_BIND_ERR;
    }
    w.key = r.bindKey();
    w.region = mr;
    w.address = r.bindAddress();
    w.length = r.bindLength();
    w.access = r.bindAccess();
    w.boundBy = qp;
    return SUCCESS;
  }

  /** LOCAL_INV posted on a QP of {@code scope}: the completion status. Holds fabric.lock. */
  static WorkCompletion.Status invalidate(Fabric fabric, @Nullable MemProtectionDomain scope, int rkey) {
    MemMemoryWindow w = fabric.windows.get(rkey & ~0xFF);
    if (w == null || w.key != rkey || w.boundBy == null || w.pd.scope() != scope) {
      return LOC_QP_OP_ERR;
    }
    w.unbind();
    return SUCCESS;
  }

  /**
   * The memory a peer of {@code target} names by window key {@code rkey} at [address, address +
   * length), when a window bound through {@code target} grants {@code needed} there; else null.
   * Holds fabric.lock.
   */
  static @Nullable MemorySegment resolve(Fabric fabric, int rkey, long address, long length, MemQueuePairState target,
      Access needed) {
    MemMemoryWindow w = fabric.windows.get(rkey & ~0xFF);
    if (w == null || w.key != rkey || w.boundBy != target || (w.access & needed.bit()) == 0 || length < 0
        || address < w.address || address + length > w.address + w.length) {
      return null;
    }
    MemMemoryRegion mr = w.region;
    if (mr == null || fabric.regions.get(mr.key()) != mr) {
      return null; // its region was deregistered under it
    }
    return mr.segment().asSlice(address - mr.segment().address(), length);
  }

  private void unbind() {
    region = null;
    boundBy = null;
    address = 0;
    length = 0;
    access = 0;
  }

  @Override
  protected void release() {
    synchronized (fabric.lock) {
      fabric.windows.remove(index);
      unbind();
    }
    fabric.released("mw");
  }

  @Override
  protected String closeFunction() {
    return "ibv_dealloc_mw";
  }
}
