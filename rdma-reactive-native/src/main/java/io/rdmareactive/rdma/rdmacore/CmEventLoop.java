package io.rdmareactive.rdma.rdmacore;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.rdmareactive.rdma.ConnectionException;
import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.spi.AbstractRdmaResource;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * An RDMA CM event channel (rdma_create_event_channel, fd non-blocking) served by one daemon
 * thread, {@code rdma-cm-N}, that polls the channel, copies and acknowledges each event at once
 * (so destroying an id never waits on us), and hands it to the {@link Handler} of its id, or to
 * the {@link CmConnector} while the id's connection is being set up ({@link #connect}). Handlers
 * run on the loop thread and must not block. Closing fails with ResourceBusyException while
 * endpoints are attached.
 */
final class CmEventLoop extends AbstractRdmaResource {
  private static final Logger log = Loggers.getLogger(CmEventLoop.class);
  private static final AtomicInteger THREADS = new AtomicInteger();
  /**
   * How often the loop turns while a connect is under way, to fail the attempts cancelled or past
   * their deadline. With none under way it sleeps until an event, a task or its close wakes it:
   * an idle process's CM thread costs no wakeups (and takes no vCPU from a busy poller).
   */
  private static final int POLL_MILLIS = 100;

  /**
   * Receives the events of one id, on the loop thread. On DISCONNECTED from the peer, call
   * {@link CmEndpoint#disconnect()} (non-blocking here): the IB CM answers the peer's DREQ only
   * then (or when the id is destroyed), and until it does the peer waits for its own DISCONNECTED.
   */
  @FunctionalInterface
  interface Handler {
    void onEvent(CmEndpoint endpoint, CmEvent event);
  }

  private final MemorySegment channel;
  private final int channelFd;
  private final int wakeFd;
  private final MemorySegment eventOut = Arena.ofAuto().allocate(ADDRESS);
  private final MemorySegment wakeBuf = Arena.ofAuto().allocate(JAVA_LONG);
  private final Map<Long, CmEndpoint> attached = new ConcurrentHashMap<>();
  private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final AsyncEventRouter asyncEvents = new AsyncEventRouter(this);
  private final CmConnector connector = new CmConnector(this);
  private final Thread thread;
  private volatile boolean running = true;

  CmEventLoop() {
    super("rdma cm event loop", null);
    MemorySegment ch;
    int wfd;
    try {
      ch = (MemorySegment) Librdmacm.CREATE_EVENT_CHANNEL.invokeExact(Native.callState());
      if (ch.equals(MemorySegment.NULL)) {
        throw RdmaCm.failure("rdma_create_event_channel");
      }
      wfd = Libc.eventfd(0,
          (int) (CmLayout.EFD_NONBLOCK | CmLayout.EFD_CLOEXEC));
      if (wfd < 0) {
        NativeCallException e = RdmaCm.failure("eventfd");
        Librdmacm.DESTROY_EVENT_CHANNEL.invokeExact(ch);
        throw e;
      }
    } catch (Throwable t) {
      abandon();
      throw RdmaCm.rethrow(t);
    }
    channel = ch.reinterpret(CmLayout.SIZEOF_EVENT_CHANNEL);
    channelFd = channel.get(JAVA_INT, CmLayout.EVENT_CHANNEL_FD);
    wakeFd = wfd;
    RdmaCm.setNonBlocking(channelFd);
    thread = new Thread(this::run, "rdma-cm-" + THREADS.incrementAndGet());
    thread.setDaemon(true);
    thread.start();
  }

  /** The struct rdma_event_channel*. */
  MemorySegment channel() {
    return channel;
  }

  /** The device async events of this loop's endpoints, read in this loop's poll. */
  AsyncEventRouter asyncEvents() {
    return asyncEvents;
  }

  boolean inLoop() {
    return Thread.currentThread() == thread;
  }

  /**
   * Moves {@code endpoint} onto this loop (rdma_migrate_id): its events go to {@code handler}
   * from now on, and its blocking calls (connect, accept, disconnect) stop waiting for events.
   * The endpoint holds a lease on the loop until it is closed.
   */
  void attach(CmEndpoint endpoint, Handler handler) {
    acquireLease();
    try {
      attached.put(endpoint.idAddress(), endpoint);
      endpoint.attached(this, handler);
      endpoint.migrate(channel);
    } catch (RuntimeException e) {
      attached.remove(endpoint.idAddress());
      endpoint.attached(null, null);
      releaseLease();
      throw e;
    }
  }

  /**
   * Connects asynchronously to {@code host}:{@code port}: rdma_create_id on this channel,
   * rdma_resolve_addr, rdma_resolve_route, rdma_create_qp ({@code qp}, default PD), rdma_connect
   * with {@code privateData}. The future completes on the loop thread with the endpoint once
   * ESTABLISHED (its {@link CmEndpoint#peerPrivateData()} is the accept's private data; the
   * ESTABLISHED event and all later ones go to {@code handler} first), or fails with a {@link ConnectionException}: REFUSED (rejected),
   * UNREACHABLE (address, route or connect error), TIMED_OUT ({@code timeout} passed). Cancelling
   * the future abandons the attempt and destroys the id.
   */
  CompletableFuture<CmEndpoint> connect(String host, int port, CmQueuePairOptions qp, byte[] privateData,
      Duration timeout, Handler handler) {
    if (privateData.length > 255) {
      throw new IllegalArgumentException("private data is at most 255 bytes (56 on InfiniBand/RoCE), was "
          + privateData.length);
    }
    return connector.start(host, port, qp, privateData, timeout, handler);
  }

  /**
   * Resolves {@code host}:{@code port} and a route to it asynchronously, as {@link #connect} does,
   * but stops there: the future completes on the loop thread with an id that has a device
   * ({@link CmEndpoint#verbsContext()}) and no QP yet, and whose later events go to
   * {@code handler}. Failures as {@link #connect}'s (TIMED_OUT once {@code timeout} passed);
   * cancelling the future destroys the id.
   */
  CompletableFuture<CmEndpoint> resolve(String host, int port, Duration timeout, Handler handler) {
    return connector.start(host, port, null, new byte[0], timeout, handler);
  }

  /**
   * Takes on {@code endpoint}, an id already on this loop's channel (created on it, or a connect
   * request's new id): its events go to {@code handler} (null for the {@link CmConnector}'s
   * attempts, whose events go there until they settle). Holds a lease on the loop until the
   * endpoint is closed.
   */
  void register(CmEndpoint endpoint, @Nullable Handler handler) {
    acquireLease();
    attached.put(endpoint.idAddress(), endpoint);
    endpoint.attached(this, handler);
  }

  /** Runs {@code task} on the loop thread. */
  void execute(Runnable task) {
    tasks.add(task);
    wake();
  }

  /** Called by an attached endpoint's close (under its lock): no more events for it. */
  void forget(CmEndpoint endpoint) {
    if (attached.remove(endpoint.idAddress()) != null) {
      connector.forget(endpoint);
      endpoint.attached(null, null);
      releaseLease();
    }
  }

  private void wake() {
    try {
      wakeBuf.set(JAVA_LONG, 0, 1L);
      long ignored = Libc.write(wakeFd, wakeBuf, 8L);
    } catch (Throwable t) {
      throw RdmaCm.rethrow(t);
    }
  }

  private void run() {
    MemorySegment drain = Arena.ofAuto().allocate(JAVA_LONG);
    while (running) {
      try {
        if (asyncEvents.await(channelFd, wakeFd, connector.pending() ? POLL_MILLIS : -1)) {
          long ignored = Libc.read(wakeFd, drain, 8L);
        }
        Runnable task;
        while ((task = tasks.poll()) != null) {
          try {
            task.run();
          } catch (Throwable t) { // the tasks behind it still run: an idle loop sleeps until woken
            log.error("rdma-cm event loop: a task failed, continuing", t);
          }
        }
        drainEvents();
        connector.checkDeadlines();
      } catch (Throwable t) {
        log.error("rdma-cm event loop: unexpected failure, continuing", t);
      }
    }
    connector.abandonAll();
    asyncEvents.closeAll();
  }

  private void drainEvents() throws Throwable {
    while (running) {
      int rc = (int) Librdmacm.GET_CM_EVENT.invokeExact(Native.callState(), channel, eventOut);
      if (rc != 0) {
        int errno = Native.lastErrno();
        if (errno != NativeCallException.EAGAIN) {
          log.warn("rdma_get_cm_event failed: {}", Native.strerror(errno));
        }
        return;
      }
      MemorySegment event = eventOut.get(ADDRESS, 0);
      CmEvent copy = CmEvent.copyOf(event);
      if (copy.type() == CmEvent.Type.DEVICE_REMOVAL) {
        DeviceRemovals.removalSeen(MemorySegment.ofAddress(copy.id())); // before the ack: the id is alive
      }
      int ack = (int) Librdmacm.ACK_CM_EVENT.invokeExact(Native.callState(), event);
      if (ack != 0) {
        log.warn("rdma_ack_cm_event failed: {}", Native.strerror(Native.lastErrno()));
      }
      dispatch(copy);
    }
  }

  private void dispatch(CmEvent event) {
    // A CONNECT_REQUEST belongs to the listening id; everything else to the id itself.
    long key = event.type() == CmEvent.Type.CONNECT_REQUEST ? event.listenId() : event.id();
    if (connector.dispatch(key, event)) {
      return;
    }
    CmEndpoint ep = attached.get(key);
    Handler h = ep == null ? null : ep.handler();
    if (ep == null || h == null) {
      if (event.type() == CmEvent.Type.CONNECT_REQUEST) {
        rejectOrphan(event);
      } else {
        log.debug("rdma-cm: {} for an id nobody listens to, dropped", event);
      }
      return;
    }
    try {
      h.onEvent(ep, event);
    } catch (Throwable t) {
      log.error("rdma-cm: handler failed on " + event, t);
    }
  }

  /**
   * A connect request whose listener went away between rdma_get_cm_event and here: its new id is
   * ours alone, so it is rejected and destroyed rather than leaked.
   */
  private static void rejectOrphan(CmEvent event) {
    MemorySegment id = MemorySegment.ofAddress(event.id());
    try {
      int ignored = (int) Librdmacm.REJECT.invokeExact(Native.callState(), id, MemorySegment.NULL, (byte) 0);
      Librdmacm.DESTROY_EP.invokeExact(id);
    } catch (Throwable t) {
      log.warn("rdma-cm: could not reject an orphaned connect request", t);
    }
    log.debug("rdma-cm: {} for a listener that is gone, rejected", event);
  }

  @Override
  protected void release() {
    running = false;
    if (!inLoop()) {
      wake();
      try {
        thread.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    try {
      Librdmacm.DESTROY_EVENT_CHANNEL.invokeExact(channel);
      Libc.close(wakeFd);
    } catch (Throwable t) {
      throw RdmaCm.rethrow(t);
    }
  }

  @Override
  protected String closeFunction() {
    return "rdma_destroy_event_channel";
  }
}
