package io.rdmareactive.rdma.inmemory;

import static io.rdmareactive.rdma.NativeCallException.EINVAL;
import static io.rdmareactive.rdma.NativeCallException.EOPNOTSUPP;

import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import io.rdmareactive.rdma.verbs.AsyncEvent;
import io.rdmareactive.rdma.verbs.CompletionChannel;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.CompletionQueueOptions;
import io.rdmareactive.rdma.verbs.DeviceAttributes;
import io.rdmareactive.rdma.verbs.PortAttributes;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.ThreadDomain;
import io.rdmareactive.rdma.verbs.XrcDomain;
import io.rdmareactive.rdma.verbs.XrcDomainOptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

final class MemContext extends AbstractRdmaResource implements RdmaContext {
  static final int MAX_QP_WR = 1 << 15;
  static final int MAX_SGE = 16;
  static final int MAX_CQE = 1 << 22;
  static final int GID_TABLE_LENGTH = 16;

  final InMemoryProvider.DeviceSpec device;
  final Fabric fabric;
  private final Sinks.Many<AsyncEvent> events = Sinks.many().multicast().directBestEffort();

  MemContext(InMemoryProvider.DeviceSpec device) {
    super("in-memory context " + device.name() + "#" + device.fabric().nextHandle(), null);
    this.device = device;
    this.fabric = device.fabric();
    fabric.created("context");
  }

  @Override
  public String deviceName() {
    return device.name();
  }

  @Override
  public String providerName() {
    return InMemoryProvider.NAME;
  }

  @Override
  public DeviceAttributes queryDevice() {
    ensureOpen();
    return new DeviceAttributes("in-memory 1.0", device.guid(), 0, 0, 1, 1 << 16, MAX_QP_WR, MAX_SGE,
        1 << 16, MAX_CQE, 1 << 20, Long.MAX_VALUE, 1 << 16, 1 << 16, MAX_QP_WR, 0, device.xrc());
  }

  @Override
  public PortAttributes queryPort(int portNumber) {
    ensureOpen();
    checkPort("ibv_query_port", portNumber);
    return new PortAttributes(PortAttributes.PortState.ACTIVE, 5, 5, 0, GID_TABLE_LENGTH,
        PortAttributes.LinkLayer.ETHERNET);
  }

  @Override
  public byte[] queryGid(int portNumber, int index) {
    ensureOpen();
    checkPort("ibv_query_gid", portNumber);
    if (index < 0 || index >= GID_TABLE_LENGTH) {
      throw Fabric.failure("ibv_query_gid", EINVAL, "GID index " + index + " is outside the table of "
          + GID_TABLE_LENGTH);
    }
    byte[] gid = new byte[16];
    gid[0] = (byte) 0xfe;
    gid[1] = (byte) 0x80;
    long guid = device.guid();
    for (int i = 0; i < 8; i++) {
      gid[8 + i] = (byte) (guid >>> (56 - 8 * i));
    }
    gid[7] = (byte) index;
    return gid;
  }

  static void checkPort(String function, int portNumber) {
    if (portNumber != 1) {
      throw Fabric.failure(function, EINVAL, "port " + portNumber + " does not exist (in-memory devices have port 1)");
    }
  }

  @Override
  public ProtectionDomain allocateProtectionDomain() {
    return new MemProtectionDomain(this);
  }

  @Override
  public ThreadDomain allocateThreadDomain() {
    ensureOpen();
    if (!device.threadDomains()) {
      throw Fabric.failure("ibv_alloc_td", EOPNOTSUPP, "device " + device.name() + " has no thread domains");
    }
    return new MemThreadDomain(this);
  }

  @Override
  public XrcDomain openXrcDomain(XrcDomainOptions options) {
    ensureOpen();
    if (!device.xrc()) {
      throw Fabric.failure("ibv_open_xrcd", EOPNOTSUPP, "device " + device.name() + " has no XRC");
    }
    return MemXrcDomain.open(this, options);
  }

  @Override
  public CompletionChannel createCompletionChannel() {
    return new MemCompletionChannel(this);
  }

  @Override
  public CompletionQueue createCompletionQueue(CompletionQueueOptions options) {
    ensureOpen();
    if (options.depth() > MAX_CQE) {
      throw Fabric.failure("ibv_create_cq", EINVAL, "CQ depth " + options.depth() + " exceeds the device maximum "
          + MAX_CQE);
    }
    MemCompletionChannel channel = null;
    if (options.channel() != null) {
      if (!(options.channel() instanceof MemCompletionChannel c)
          || (c.context != this && !(c.sharable() && c.context.device.equals(device)))) {
        throw new IllegalArgumentException("completion channel " + options.channel() + " belongs to another context");
      }
      channel = c;
    }
    return new MemCompletionQueue(this, options.depth(), channel);
  }

  @Override
  public Flux<AsyncEvent> asyncEvents() {
    return events.asFlux();
  }

  /** Called with fabric.lock held, which serializes emissions. */
  void emit(AsyncEvent event) {
    events.tryEmitNext(event);
  }

  /** Fails unless {@code resource} is an in-memory object of this context. */
  <T> T own(Object resource, Class<T> type, String what) {
    if (!type.isInstance(resource)) {
      throw new IllegalArgumentException(what + " " + resource + " is not an in-memory object");
    }
    T t = type.cast(resource);
    if (t instanceof Owned o && o.context() != this) {
      throw new IllegalArgumentException(what + " " + resource + " belongs to another context");
    }
    return t;
  }

  /** In-memory objects that know their context. */
  interface Owned {
    MemContext context();
  }

  @Override
  protected void release() {
    synchronized (fabric.lock) {
      events.tryEmitComplete();
    }
    fabric.released("context");
  }

  @Override
  protected String closeFunction() {
    return "ibv_close_device";
  }
}
