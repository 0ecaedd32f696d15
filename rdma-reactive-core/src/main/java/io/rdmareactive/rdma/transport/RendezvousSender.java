package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.UnsupportedByDeviceException;
import io.rdmareactive.rdma.verbs.Access;
import io.rdmareactive.rdma.verbs.MemoryRegion;
import io.rdmareactive.rdma.verbs.MemoryWindow;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.SendRequest;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;

/**
 * The sending half of the rendezvous for {@link RegisteredMessage}s above
 * {@link RdmaOption#RENDEZVOUS_THRESHOLD}: exposes exactly the message's bytes to the peer, for
 * it to pull by RDMA READ, and revokes that once the peer says DONE (or the connection ends). The
 * key is a type-2 memory window bound to exactly the range (a bind work request before the
 * descriptor's SEND, a LOCAL_INV on DONE) where the region allows window binding ({@link
 * Access#MW_BIND}) and the device confines a window to its range; else a registration of exactly
 * the range with remote read, deregistered on DONE (rxe: see docs/design.md). The message is
 * released only once the key opens nothing; a peer that does not say DONE within the deadline
 * fails the connection, and the key and the memory go once its queue pair is destroyed. DONEs
 * come in the order of the descriptors. Plain state driven from the connection's drain.
 */
final class RendezvousSender {
  private static final Set<Access> READ_ONLY = Set.of(Access.REMOTE_READ);

  /** A message that could not be exposed to the peer (its own failure, not the connection's): the cause says why. */
  static final class Unexposable extends RuntimeException {
    Unexposable(RuntimeException cause) {
      super(cause.getMessage(), cause, false, false);
    }
  }

  /** One message exposed to the peer. */
  static final class Entry {
    final RegisteredMessage message;
    final int id;
    final long address;
    final int key;
    final @Nullable MemoryWindow window;
    final @Nullable MemoryRegion registration;
    long sequence;
    @Nullable Disposable timer;
    volatile boolean expired;
    boolean done;

    Entry(RegisteredMessage message, int id, long address, int key, @Nullable MemoryWindow window,
        @Nullable MemoryRegion registration) {
      this.message = message;
      this.id = id;
      this.address = address;
      this.key = key;
      this.window = window;
      this.registration = registration;
    }
  }

  private final ConnectionOperations connection;
  private final SendPoster out;
  private final RegisteredBuffers buffers;
  private final ProtectionDomain pd;
  private final Duration deadline;
  /** The bind or LOCAL_INV being queued. */
  private final SendRequest keyRequest = new SendRequest();
  private final RendezvousReceiver.Post localPost;
  /** Ids of rendezvous messages this side has read, whose DONE is still to be sent. */
  private final IntRing donesDue = new IntRing(16);
  private boolean windows;
  private final ArrayDeque<MemoryWindow> freeWindows = new ArrayDeque<>();
  /** Exposed, in descriptor order; the head ones may be done and waiting for their LOCAL_INV to retire. */
  private final ArrayDeque<Entry> exposed = new ArrayDeque<>();
  /** Whose keys could not be revoked by a LOCAL_INV (it failed): freed with the queue pair. */
  private final ArrayDeque<Entry> unrevoked = new ArrayDeque<>();
  private int nextId;
  private int invalidatesPosted;

  RendezvousSender(ConnectionOperations connection, SendPoster out, RegisteredBuffers buffers, Duration deadline) {
    this.connection = connection;
    this.out = out;
    this.buffers = buffers;
    this.pd = connection.protectionDomain();
    this.deadline = deadline;
    this.localPost = out::queueLocal;
    // rxe's responder checks a window's READs against the region, not the window (docs/design.md).
    this.windows = !pd.context().deviceName().startsWith("rxe");
  }

  /**
   * Sends {@code m} by rendezvous: exposes it (a window's bind queued first, where it is one, which
   * executes before the descriptor, in order) and posts its descriptor, one SEND. False, doing
   * nothing, when out of credits, buffers or send queue room; throws {@link Unexposable}, exposing
   * nothing, when the exposure fails, and what a post throws (the connection's failure) as it is.
   */
  boolean send(RegisteredMessage m) {
    int index = out.controlBuffer(2);
    if (index < 0) {
      return false;
    }
    Entry e;
    try {
      e = expose(m, keyRequest);
    } catch (RuntimeException ex) {
      buffers.freeSend(index);
      throw new Unexposable(ex);
    }
    // Before the posts: a post that throws fails the connection, whose close revokes this key
    // with the rest (a later sequence is set when the descriptor is posted).
    e.sequence = Long.MAX_VALUE;
    exposed.add(e);
    if (e.window != null) {
      out.queueLocal(keyRequest); // room checked above
    }
    writeDescriptor(buffers.sendMemory(index), buffers.sendOffset(index), e);
    posted(e, out.postControl(index, Protocol.DESCRIPTOR, Protocol.RNDV));
    return true;
  }

  /**
   * The rendezvous' own work, each drain: DONEs owed to the peer (as credits allow), keys of
   * messages done to revoke, and the deadline of the DONEs the peer owes.
   */
  void dueWork() {
    if (exposed.isEmpty() && donesDue.isEmpty()) {
      return; // no rendezvous in either direction: every message's drain passes here
    }
    int index;
    while (!donesDue.isEmpty() && (index = out.controlBuffer(1)) >= 0) {
      buffers.sendMemory(index).set(BatchDecoder.INT, buffers.sendOffset(index), donesDue.poll());
      out.postControl(index, Protocol.DONE_LENGTH, Protocol.DONE);
    }
    revokeDone(keyRequest, localPost);
    Entry late = expired();
    if (late != null && connection.failure() == null) {
      connection.protocolError("it did not finish reading rendezvous message " + late.id + " (" + late.message.length()
          + " bytes) within " + deadline + " (RdmaOption.CLOSE_TIMEOUT)");
      connection.drain(); // once more: the failure disconnects
    }
  }

  /** This side has read rendezvous message {@code id}: the peer is told DONE as soon as a credit allows. */
  void queueDone(int id) {
    donesDue.add(id);
  }

  /** DONEs this side owes the peer and messages it awaits one for: a dispose waits for them as for sends. */
  int outstanding() {
    return donesDue.size() + awaitingDone();
  }

  /**
   * Exposes {@code m}: where it is a window, {@code bind} is filled with the bind to queue before
   * the descriptor (returned entry's window non-null). Throws when the registration fails; nothing
   * is exposed then.
   */
  private Entry expose(RegisteredMessage m, SendRequest bind) {
    int id = nextId++;
    MemoryRegion region = m.region();
    if (windows && region.access().contains(Access.MW_BIND)) {
      MemoryWindow w = freeWindows.poll();
      if (w == null) {
        try {
          w = pd.allocateMemoryWindow();
        } catch (UnsupportedByDeviceException e) {
          windows = false; // a device without type-2 windows: registrations from now on
        }
      }
      if (w != null) {
        bind.bind(CompletionDispatcher.RNDV_BIND, w, region, m.offset(), m.length(), READ_ONLY);
        return new Entry(m, id, region.address() + m.offset(), bind.bindKey(), w, null);
      }
    }
    MemoryRegion r = pd.registerMemory(region.segment().asSlice(m.offset(), m.length()), READ_ONLY);
    return new Entry(m, id, r.address(), r.remoteKey(), null, r);
  }

  /** Writes {@code e}'s descriptor ({@link Protocol#DESCRIPTOR} bytes) at {@code offset} of {@code memory}. */
  private static void writeDescriptor(MemorySegment memory, long offset, Entry e) {
    memory.set(BatchDecoder.INT, offset, e.id);
    memory.set(BatchDecoder.INT, offset + 4, e.message.length());
    memory.set(BatchDecoder.INT, offset + 8, (int) (e.address >>> 32));
    memory.set(BatchDecoder.INT, offset + 12, (int) e.address);
    memory.set(BatchDecoder.INT, offset + 16, e.key);
    memory.set(BatchDecoder.INT, offset + 20, 0);
  }

  /** {@code e}'s descriptor is data send {@code sequence}: its deadline starts. */
  private void posted(Entry e, long sequence) {
    e.sequence = sequence;
    e.timer = connection.schedule(() -> {
      e.expired = true;
      connection.drain();
    }, deadline);
  }

  /** The peer said DONE for {@code id}: its key is revoked; a DONE out of order fails the connection. */
  void doneReceived(int id) {
    String violation = done(id);
    if (violation != null) {
      connection.protocolError(violation);
    }
  }

  /** The peer said DONE for {@code id}: null, or the violation (not the oldest message it reads). */
  private @Nullable String done(int id) {
    for (Entry e : exposed) {
      if (!e.done) {
        if (e.id != id) {
          return "it said DONE for rendezvous message " + id + " while " + e.id + " was the oldest it was reading";
        }
        e.done = true;
        dispose(e);
        return null;
      }
    }
    return "it said DONE for rendezvous message " + id + ", which it was not reading";
  }

  /**
   * Revokes the keys of messages done, in order: a registration at once (the message is released),
   * a window by a LOCAL_INV that {@code post} queues (released when it retires). False when the
   * send queue had no room for one.
   */
  private boolean revokeDone(SendRequest invalidate, RendezvousReceiver.Post post) {
    int skip = invalidatesPosted;
    for (;;) {
      Entry e = nth(skip);
      if (e == null || !e.done) {
        return true;
      }
      if (e.registration != null) {
        if (skip > 0) {
          return true; // behind a LOCAL_INV still to retire: in order
        }
        exposed.poll();
        e.registration.close();
        e.message.release();
        continue;
      }
      if (!post.queue(invalidate.invalidate(CompletionDispatcher.RNDV_INVALIDATE, e.key))) {
        return false;
      }
      invalidatesPosted++;
      skip++;
    }
  }

  private @Nullable Entry nth(int n) {
    for (Entry e : exposed) {
      if (n-- == 0) {
        return e;
      }
    }
    return null;
  }

  /**
   * A LOCAL_INV or bind retired ({@code invalidate}: a LOCAL_INV). An invalidate that succeeded
   * frees its message and its window for the next message; one that failed was flushed, the queue
   * pair being in ERROR, through which alone a type-2 window opens anything: the message is
   * released too, and the window, its state unknown, waits for the queue pair's destruction. A
   * failed bind fails the connection (the dispatcher says why).
   */
  void keyRetired(boolean invalidate, boolean success) {
    if (!invalidate) {
      return;
    }
    Entry e = exposed.poll();
    invalidatesPosted--;
    if (e == null) {
      return;
    }
    if (success) {
      freeWindows.add(java.util.Objects.requireNonNull(e.window));
    } else {
      unrevoked.add(e);
    }
    e.message.release();
  }

  /**
   * Disconnected, and every flush polled: no peer reads through any key now, so the messages the
   * peer said DONE for (delivered) are released, their keys closed with the queue pair.
   */
  void releaseDone() {
    Entry e;
    while ((e = exposed.peek()) != null && e.done) {
      exposed.poll();
      unrevoked.add(e);
      e.message.release();
    }
    invalidatesPosted = 0;
  }

  /** Messages the peer has not said DONE for: it needs a credit for each DONE, so this side posts receives for them. */
  int awaitingDone() {
    if (exposed.isEmpty()) {
      return 0;
    }
    int n = 0;
    for (Entry e : exposed) {
      n += e.done ? 0 : 1;
    }
    return n;
  }

  /** Whether every message whose descriptor is data send {@code sequence} or earlier is released. */
  boolean settledThrough(long sequence) {
    Entry head = exposed.peek();
    return head == null || head.sequence > sequence;
  }

  /** The oldest message the peer has not said DONE for, when its deadline passed; else null. */
  private @Nullable Entry expired() {
    for (Entry e : exposed) {
      if (!e.done) {
        return e.expired ? e : null;
      }
    }
    return null;
  }

  /**
   * The queue pair is disconnected and its work requests done (flushed, or given up on): no peer
   * reads through a key any more. Closes every window and registration and releases every message
   * still exposed.
   */
  void releaseAll() {
    Entry e;
    while ((e = exposed.poll()) != null) {
      free(e);
    }
    while ((e = unrevoked.poll()) != null) {
      free(e); // its message is released already: release() is idempotent
    }
    invalidatesPosted = 0;
    MemoryWindow w;
    while ((w = freeWindows.poll()) != null) {
      w.close();
    }
  }

  private static void free(Entry e) {
    dispose(e);
    try {
      if (e.window != null) {
        e.window.close();
      }
      if (e.registration != null) {
        e.registration.close();
      }
    } finally {
      e.message.release();
    }
  }

  private static void dispose(Entry e) {
    Disposable t = e.timer;
    if (t != null) {
      t.dispose();
    }
  }
}
