package io.rdmareactive.rdma.rdmacore;

import static io.rdmareactive.rdma.rdmacore.VerbsLayout.ASYNC_EVENT_ELEMENT;
import static io.rdmareactive.rdma.rdmacore.VerbsLayout.ASYNC_EVENT_EVENT_TYPE;
import static io.rdmareactive.rdma.rdmacore.VerbsLayout.CONTEXT_ASYNC_FD;
import static io.rdmareactive.rdma.rdmacore.VerbsLayout.SIZEOF_ASYNC_EVENT;
import static io.rdmareactive.rdma.rdmacore.VerbsLayout.SIZEOF_CONTEXT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.verbs.AsyncEvent;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * Reads the asynchronous events (ibv_get_async_event) of the device contexts a {@link CmEventLoop}'s
 * endpoints use, librdmacm's id->verbs, which nobody else reads, and fails the connections an
 * event concerns: QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR and PATH_MIG_ERR the one whose QP it names,
 * CQ_ERR the one owning the CQ, PORT_ERR every one bound to that port, DEVICE_FATAL every one on
 * the device. Informational events are logged at debug. Every event is acknowledged before the
 * next is read (ibv_destroy_qp/cq wait for their events' acknowledgements).
 *
 * <p>The async fds join the CM loop's poll rather than getting a thread per device: the loop runs
 * exactly while endpoints exist, already wakes on its eventfd, and already hands connection
 * failures (device removal) to the connections' own loops; a reader there cannot outlive the
 * endpoints it serves, and no thread is left to stop. Everything here but {@link #register} and
 * {@link #unregister} runs on the loop's thread.
 *
 * <p>A device is watched from its first endpoint's creation until its last one is closed: the
 * endpoints' CM ids keep librdmacm's context open meanwhile (it closes a removed device's context
 * with the last id on it). The last endpoint retires the device, under the device's lock that the
 * loop holds while it reads events, before its id is destroyed: the loop never reads a context
 * freed under it, and librdmacm's reference counts (its per-device PD) are left as they were.
 */
final class AsyncEventRouter {
  private static final Logger log = Loggers.getLogger(AsyncEventRouter.class);
  private static final short POLLERR = 8, POLLHUP = 16, POLLNVAL = 32;
  private static final int CHANNEL_AND_WAKE = 2;

  private final CmEventLoop loop;
  private final ConcurrentHashMap<Long, Device> devices = new ConcurrentHashMap<>();
  private final MemorySegment event = Arena.ofAuto().allocate(SIZEOF_ASYNC_EVENT, 8); // loop thread only
  private MemorySegment pollfds = MemorySegment.NULL; // loop thread only

  AsyncEventRouter(CmEventLoop loop) {
    this.loop = loop;
  }

  /**
   * Watches {@code endpoint}'s device context {@code verbs} until {@link #unregister}. The first
   * endpoint of a device makes its async fd non-blocking and drops the events queued before (they
   * concern no connection of ours); its fd joins the poll at the loop's next turn.
   */
  void register(NativeConnectionEndpoint endpoint, MemorySegment verbs, String deviceName) {
    devices.compute(verbs.address(), (address, d) -> {
      Device device = d != null ? d : Device.open(verbs, deviceName);
      device.endpoints.add(endpoint);
      return device;
    });
    loop.execute(() -> {}); // wakes the loop, so the new fd is polled now (an idle loop sleeps until woken)
  }

  /**
   * Stops routing to {@code endpoint}, before its CM id is destroyed: the device's last endpoint
   * retires it at once (waiting at most for a read of its events in progress), so no later read
   * can touch a context that destroying the id may free.
   */
  void unregister(NativeConnectionEndpoint endpoint, MemorySegment verbs) {
    Device left = devices.computeIfPresent(verbs.address(), (address, d) -> {
      d.endpoints.remove(endpoint);
      if (!d.endpoints.isEmpty()) {
        return d;
      }
      d.retire();
      return null;
    });
    if (left == null) {
      // An idle loop sleeps in poll(2) with the retired fd in its set, and the poll holds the
      // file: woken, it polls without it, so a device being removed is not kept waiting for it.
      loop.execute(() -> {});
    }
  }

  /** On the loop, once it stops: every device is let go (no endpoint is left by then). */
  void closeAll() {
    for (Long address : devices.keySet()) {
      Device d = devices.remove(address);
      if (d != null) {
        d.retire();
      }
    }
  }

  /**
   * poll(2) on the CM channel, the loop's wakeup eventfd and every watched device's async fd for up
   * to {@code timeoutMillis} (-1: until one is readable); the devices' events are read and routed
   * before this returns.
   *
   * @return whether anything was readable (false on timeout or EINTR)
   */
  boolean await(int channelFd, int wakeFd, int timeoutMillis) {
    Device[] watched = devices.values().stream().filter(d -> !d.broken).toArray(Device[]::new);
    int n = CHANNEL_AND_WAKE + watched.length;
    long size = CmLayout.SIZEOF_POLLFD * n;
    if (pollfds.byteSize() < size) {
      pollfds = Arena.ofAuto().allocate(size * 2, 8);
    }
    MemorySegment p = pollfds;
    watch(p, 0, channelFd);
    watch(p, 1, wakeFd);
    for (int i = 0; i < watched.length; i++) {
      watch(p, CHANNEL_AND_WAKE + i, watched[i].fd);
    }
    int rc = Libc.poll(p, n, timeoutMillis);
    if (rc < 0) {
      int errno = Native.lastErrno();
      if (errno == NativeCallException.EINTR) {
        return false;
      }
      throw Native.failure("poll", errno, "CM channel, wakeup and " + watched.length + " device async fd(s)");
    }
    for (int i = 0; i < watched.length && rc > 0; i++) {
      short revents = p.get(JAVA_SHORT, CmLayout.SIZEOF_POLLFD * (CHANNEL_AND_WAKE + i) + CmLayout.POLLFD_REVENTS);
      if (revents != 0) {
        drain(watched[i], revents);
      }
    }
    return rc > 0;
  }

  private static void watch(MemorySegment pollfds, int index, int fd) {
    long at = CmLayout.SIZEOF_POLLFD * index;
    pollfds.set(JAVA_INT, at, fd);
    pollfds.set(JAVA_SHORT, at + CmLayout.POLLFD_EVENTS, (short) CmLayout.POLLIN);
    pollfds.set(JAVA_SHORT, at + CmLayout.POLLFD_REVENTS, (short) 0);
  }

  private void drain(Device d, short revents) {
    List<Runnable> faults = new ArrayList<>();
    synchronized (d) { // against retire(): the context stays open while it is not retired
      while (!d.retired && readOne(d, revents, faults)) {
        // every queued event, each acknowledged before the next is read
      }
    }
    faults.forEach(Runnable::run); // outside the lock: failing a connection may close its endpoint here
  }

  /** Reads, routes and acknowledges one event of {@code d}; false when there is none (or no more ever). */
  private boolean readOne(Device d, short revents, List<Runnable> faults) {
    if (Ibverbs.getAsyncEvent(d.ctx, event) != 0) {
      int errno = Native.lastErrno();
      if ((errno != NativeCallException.EAGAIN && errno != NativeCallException.EINTR)
          || (revents & (POLLERR | POLLHUP | POLLNVAL)) != 0) {
        // A dead fd stays readable: polling it on would spin. Its endpoints hear of it from the CM.
        d.broken = true;
        log.warn("rdma-reactive: {}'s async events can no longer be read (ibv_get_async_event: {}, revents 0x{}); "
            + "no longer watched", d.name, Native.strerror(errno), Integer.toHexString(revents));
      }
      return false;
    }
    int code = event.get(JAVA_INT, ASYNC_EVENT_EVENT_TYPE);
    AsyncEvent.Type type = AsyncEvent.Type.of(code);
    long element = event.get(JAVA_LONG, ASYNC_EVENT_ELEMENT);
    List<NativeConnectionEndpoint> hit;
    try {
      // Looked up before the ack: until then the QP or CQ the event names cannot be destroyed,
      // so its address cannot belong to a newer object yet.
      hit = d.affected(type, element);
    } finally {
      Ibverbs.ackAsyncEvent(event);
    }
    String what = describe(type, code, element, d.name);
    if (hit != null) {
      // rxe raises CQ_ERR again for each receive it then flushes into the full CQ: one warning and
      // one failure per connection, not one per event.
      hit = hit.stream().filter(NativeConnectionEndpoint::claimAsyncFault).toList();
    }
    if (hit == null || hit.isEmpty()) {
      log.debug("rdma-reactive: {} (no connection of ours is failed by it{})", what, hit == null ? "" : " anew");
    } else {
      log.warn("rdma-reactive: {} fails {} connection(s)", what, hit.size());
      for (NativeConnectionEndpoint ep : hit) {
        faults.add(() -> ep.asyncFault(what)); // hands over to the connection's own loop, as a CM disconnect does
      }
    }
    return true;
  }

  /** "IBV_EVENT_PORT_ERR on rxe0 port 1", "IBV_EVENT_QP_FATAL on rxe0 (QP 0x...)". */
  static String describe(AsyncEvent.Type type, int code, long element, String device) {
    String name = type == AsyncEvent.Type.UNKNOWN ? "ibv_event_type " + code : "IBV_EVENT_" + type.name();
    return name + " on " + device + switch (type) {
      case PORT_ACTIVE, PORT_ERR, LID_CHANGE, PKEY_CHANGE, SM_CHANGE, CLIENT_REREGISTER, GID_CHANGE ->
          " port " + (int) element;
      case DEVICE_FATAL, UNKNOWN -> "";
      case CQ_ERR -> " (CQ 0x" + Long.toHexString(element) + ")";
      case SRQ_ERR, SRQ_LIMIT_REACHED -> " (SRQ 0x" + Long.toHexString(element) + ")";
      case WQ_FATAL -> " (WQ 0x" + Long.toHexString(element) + ")";
      default -> " (QP 0x" + Long.toHexString(element) + ")";
    };
  }

  /** One watched device context and the endpoints on it. */
  private static final class Device {
    final MemorySegment ctx;
    final int fd;
    final String name;
    final Set<NativeConnectionEndpoint> endpoints = ConcurrentHashMap.newKeySet();
    boolean broken; // loop thread only
    boolean retired; // guarded by this

    private Device(MemorySegment ctx, int fd, String name) {
      this.ctx = ctx;
      this.fd = fd;
      this.name = name;
    }

    static Device open(MemorySegment verbs, String name) {
      MemorySegment ctx = verbs.reinterpret(SIZEOF_CONTEXT);
      int fd = ctx.get(JAVA_INT, CONTEXT_ASYNC_FD);
      Libc.setNonBlocking(fd);
      Device d = new Device(ctx, fd, name);
      d.dropQueued();
      return d;
    }

    /** Events queued before this device's first endpoint existed are acknowledged unread. */
    private void dropQueued() {
      try (Arena a = Arena.ofConfined()) {
        MemorySegment e = a.allocate(SIZEOF_ASYNC_EVENT, 8);
        while (Ibverbs.getAsyncEvent(ctx, e) == 0) {
          int code = e.get(JAVA_INT, ASYNC_EVENT_EVENT_TYPE);
          long element = e.get(JAVA_LONG, ASYNC_EVENT_ELEMENT);
          Ibverbs.ackAsyncEvent(e);
          log.debug("rdma-reactive: {} queued before {}'s first connection, dropped",
              describe(AsyncEvent.Type.of(code), code, element, name), name);
        }
      }
    }

    /** The endpoints {@code type} fails, or null for an event that fails none. */
    @Nullable List<NativeConnectionEndpoint> affected(AsyncEvent.Type type, long element) {
      List<NativeConnectionEndpoint> hit = switch (type) {
        case QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR, PATH_MIG_ERR ->
            endpoints.stream().filter(ep -> ep.queuePairAddress() == element).toList();
        case CQ_ERR -> endpoints.stream().filter(ep -> ep.completionQueueAddress() == element).toList();
        // An id whose port librdmacm never filled in (0) may be on any port: failed to be safe.
        case PORT_ERR -> endpoints.stream().filter(ep -> ep.portNumber() == (int) element || ep.portNumber() == 0)
            .toList();
        case DEVICE_FATAL -> List.copyOf(endpoints);
        default -> List.of(); // COMM_EST, SQ_DRAINED, PORT_ACTIVE, LID/PKEY/GID/SM changes, ...: informational
      };
      return hit.isEmpty() ? null : hit;
    }

    /** No more reads: waits for one in progress. */
    synchronized void retire() {
      retired = true;
    }
  }
}
