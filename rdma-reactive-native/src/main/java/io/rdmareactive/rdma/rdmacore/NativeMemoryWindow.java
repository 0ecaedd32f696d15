package io.rdmareactive.rdma.rdmacore;

import static io.rdmareactive.rdma.rdmacore.VerbsLayout.MW_RKEY;
import static io.rdmareactive.rdma.rdmacore.VerbsLayout.SIZEOF_MW;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.MemoryWindow;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import java.lang.foreign.MemorySegment;

/**
 * A type-2 memory window (ibv_alloc_mw / ibv_dealloc_mw, both static inline in verbs.h: called
 * through the context's ops, as they do). A bind is a work request; the provider reads the
 * window's current key from {@code struct ibv_mw.rkey} when the next bind is posted (rxe checks it
 * against its own), and nothing in libibverbs updates that field after a bind work request, so
 * {@link #bound} writes it once the bind is posted.
 */
final class NativeMemoryWindow extends AbstractRdmaResource implements MemoryWindow {
  /** enum ibv_mw_type. */
  private static final int IBV_MW_TYPE_2 = 2;

  private final NativeProtectionDomain pd;
  private final MemorySegment deallocFn;
  /** struct ibv_mw; never touched after release (every use checks that the window is open). */
  final MemorySegment mw;
  private volatile int key;

  private NativeMemoryWindow(NativeProtectionDomain pd, MemorySegment mw) {
    super("MemoryWindow[type 2, rkey 0x" + Integer.toHexString(mw.reinterpret(SIZEOF_MW).get(JAVA_INT, MW_RKEY)) + "]", pd);
    this.pd = pd;
    this.deallocFn = pd.context.deallocMwFn;
    this.mw = mw.reinterpret(SIZEOF_MW);
    this.key = this.mw.get(JAVA_INT, MW_RKEY);
  }

  /** ibv_alloc_mw(pd, IBV_MW_TYPE_2): EOPNOTSUPP, as the inline function says, where the provider has no windows. */
  static NativeMemoryWindow allocate(NativeProtectionDomain pd) {
    NativeContext context = pd.context;
    if (context.allocMwFn.address() == 0 || context.deallocMwFn.address() == 0) {
      throw Native.failure("ibv_alloc_mw", NativeCallException.EOPNOTSUPP,
          "the provider of " + context.deviceName() + " has no memory windows");
    }
    MemorySegment mw = Native.created("ibv_alloc_mw", InlineVerbs.allocMw(context.allocMwFn, pd.pd, IBV_MW_TYPE_2));
    try {
      return new NativeMemoryWindow(pd, mw);
    } catch (RuntimeException | Error e) {
      InlineVerbs.deallocMw(context.deallocMwFn, mw);
      throw e;
    }
  }

  @Override
  public ProtectionDomain protectionDomain() {
    return pd;
  }

  @Override
  public int remoteKey() {
    return key;
  }

  /** A bind giving it {@code newKey} was posted: the next bind's post must name it by that key. */
  synchronized void bound(int newKey) {
    if (!isClosed()) {
      mw.set(JAVA_INT, MW_RKEY, newKey);
      key = newKey;
    }
  }

  @Override
  protected void release() {
    Native.checkReturn(closeFunction(), InlineVerbs.deallocMw(deallocFn, mw));
  }

  @Override
  protected String closeFunction() {
    return "ibv_dealloc_mw";
  }
}
