package io.rdmareactive.rdma.rdmacore;

import static io.rdmareactive.rdma.rdmacore.VerbsLayout.*;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.SharedReceiveQueue;
import io.rdmareactive.rdma.verbs.SharedReceiveQueueOptions;
import io.rdmareactive.rdma.verbs.XrcDomain;
import io.rdmareactive.rdma.verbs.XrcDomainOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * An XRC domain (open_xrcd / close_xrcd through struct verbs_context). A shared domain is named by
 * a file's inode: the file is opened with open(2) and its fd kept until the domain is closed.
 */
final class NativeXrcDomain extends AbstractRdmaResource implements XrcDomain, NativeContextBound {
  // enum ibv_xrcd_init_attr_mask (not to be confused with the field offsets of VerbsLayout)
  static final int MASK_FD = 1, MASK_OFLAGS = 1 << 1;

  private final NativeContext context;
  final MemorySegment xrcd;
  private final int fd;

  private NativeXrcDomain(NativeContext context, MemorySegment xrcd, int fd, String what) {
    super("XrcDomain[" + context.deviceName() + " " + what + "]", context);
    this.context = context;
    this.xrcd = xrcd;
    this.fd = fd;
  }

  static NativeXrcDomain open(NativeContext context, XrcDomainOptions o) {
    MemorySegment fn = context.extendedOp(VERBS_CONTEXT_OPEN_XRCD, "ibv_open_xrcd");
    Path file = o.file();
    int oflags = (o.create() ? Libc.O_CREAT : 0) | (o.exclusive() ? Libc.O_EXCL : 0);
    int fd = -1;
    if (file != null) {
      // The inode names the domain; O_CREAT here only creates the file, O_EXCL is for the domain.
      fd = Libc.open(file.toString(), Libc.O_RDONLY | Libc.O_CLOEXEC | (o.create() ? Libc.O_CREAT : 0), 0600);
    }
    MemorySegment x = null;
    try (Arena a = Arena.ofConfined()) {
      MemorySegment attr = a.allocate(SIZEOF_XRCD_INIT_ATTR, 4);
      attr.set(JAVA_INT, XRCD_INIT_ATTR_COMP_MASK, MASK_FD | MASK_OFLAGS);
      attr.set(JAVA_INT, XRCD_INIT_ATTR_FD, fd);
      attr.set(JAVA_INT, XRCD_INIT_ATTR_OFLAGS, oflags);
      x = Native.created("ibv_open_xrcd", InlineVerbs.createExtended(fn, context.ctx, attr));
      return new NativeXrcDomain(context, x, fd, file == null ? "private" : file.toString());
    } catch (RuntimeException | Error e) {
      if (x != null) {
        MemorySegment close = context.extendedOpOrNull(VERBS_CONTEXT_CLOSE_XRCD);
        if (close != null) {
          InlineVerbs.destroyExtended(close, x);
        }
      }
      if (fd >= 0) {
        Libc.close(fd);
      }
      throw e;
    }
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
  public SharedReceiveQueue createSharedReceiveQueue(ProtectionDomain pd, CompletionQueue cq,
      SharedReceiveQueueOptions options) {
    ensureOpen();
    if (!(pd instanceof NativeProtectionDomain npd)) {
      throw new IllegalArgumentException("protection domain " + pd + " is not a native one");
    }
    if (!(cq instanceof NativeCompletionQueue ncq)) {
      throw new IllegalArgumentException("CQ " + cq + " is not a native one");
    }
    return NativeSharedReceiveQueue.createXrc(this, npd, ncq, options);
  }

  @Override
  public QueuePair createReceiveQueuePair() {
    ensureOpen();
    return QueuePairFactory.createXrcReceive(this);
  }

  @Override
  public QueuePair openQueuePair(int qpNumber) {
    ensureOpen();
    return QueuePairFactory.open(this, qpNumber);
  }

  @Override
  protected void release() {
    // ibv_close_xrcd calls verbs_context.close_xrcd unconditionally; we checked it exists.
    MemorySegment close = context.extendedOp(VERBS_CONTEXT_CLOSE_XRCD, "ibv_close_xrcd");
    Native.checkReturn(closeFunction(), InlineVerbs.destroyExtended(close, xrcd));
    if (fd >= 0) {
      Libc.close(fd);
    }
  }

  @Override
  protected String closeFunction() {
    return "ibv_close_xrcd";
  }
}
