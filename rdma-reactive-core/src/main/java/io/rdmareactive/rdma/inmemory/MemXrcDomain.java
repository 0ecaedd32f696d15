package io.rdmareactive.rdma.inmemory;

import static io.rdmareactive.rdma.NativeCallException.EEXIST;
import static io.rdmareactive.rdma.NativeCallException.EIO;
import static io.rdmareactive.rdma.NativeCallException.ENOENT;

import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.QueuePair;
import io.rdmareactive.rdma.verbs.SharedReceiveQueue;
import io.rdmareactive.rdma.verbs.SharedReceiveQueueOptions;
import io.rdmareactive.rdma.verbs.XrcDomain;
import io.rdmareactive.rdma.verbs.XrcDomainOptions;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;

/** One handle on an XRC domain; handles opened for the same file inode share the domain. */
final class MemXrcDomain extends AbstractRdmaResource implements XrcDomain, MemContext.Owned {
  final MemContext context;
  private final Fabric fabric;
  final MemXrcDomainState core;

  private MemXrcDomain(MemContext context, MemXrcDomainState core) {
    super("in-memory XRC domain #" + context.fabric.nextHandle(), context);
    this.context = context;
    this.fabric = context.fabric;
    this.core = core;
    fabric.created("xrcd");
  }

  static MemXrcDomain open(MemContext context, XrcDomainOptions options) {
    Path file = options.file();
    if (file == null) {
      return new MemXrcDomain(context, new MemXrcDomainState(context.fabric, null));
    }
    Object key = List.of(context.device.name(), fileKey(file, options.create()));
    MemXrcDomainState core;
    Fabric fabric = context.fabric;
    synchronized (fabric.lock) {
      core = fabric.xrcDomains.get(key);
      if (core != null) {
        if (options.exclusive()) {
          throw Fabric.failure("ibv_open_xrcd", EEXIST, "an XRC domain for the inode of " + file + " already exists");
        }
        core.handles++;
      } else {
        if (!options.create()) {
          throw Fabric.failure("ibv_open_xrcd", ENOENT, "no XRC domain exists for the inode of " + file
              + " and create was not asked for");
        }
        core = new MemXrcDomainState(fabric, key);
        fabric.xrcDomains.put(key, core);
      }
    }
    try {
      return new MemXrcDomain(context, core);
    } catch (RuntimeException e) {
      core.unref();
      throw e;
    }
  }

  private static Object fileKey(Path file, boolean create) {
    try {
      if (create) {
        try {
          Files.createFile(file);
        } catch (FileAlreadyExistsException ignored) {
          // the usual case: the file names an existing domain or is shared by agreement
        }
      }
      Object k = Files.readAttributes(file, BasicFileAttributes.class).fileKey();
      return k != null ? k : file.toRealPath();
    } catch (NoSuchFileException e) {
      throw Fabric.failure("open", ENOENT, "XRC domain file " + file + " does not exist");
    } catch (IOException e) {
      throw Fabric.failure("open", EIO, "XRC domain file " + file + ": " + e.getMessage());
    }
  }

  @Override
  public MemContext context() {
    return context;
  }

  @Override
  public SharedReceiveQueue createSharedReceiveQueue(ProtectionDomain pd, CompletionQueue cq,
      SharedReceiveQueueOptions options) {
    ensureOpen();
    return MemSharedReceiveQueue.xrc(this, context.own(pd, MemProtectionDomain.class, "protection domain"),
        context.own(cq, MemCompletionQueue.class, "completion queue"), options);
  }

  @Override
  public QueuePair createReceiveQueuePair() {
    ensureOpen();
    return MemQueuePair.xrcReceive(this);
  }

  @Override
  public QueuePair openQueuePair(int qpNumber) {
    ensureOpen();
    return MemQueuePair.openXrcReceive(this, qpNumber);
  }

  @Override
  protected void release() {
    core.unref();
    fabric.released("xrcd");
  }

  @Override
  protected String closeFunction() {
    return "ibv_close_xrcd";
  }
}
