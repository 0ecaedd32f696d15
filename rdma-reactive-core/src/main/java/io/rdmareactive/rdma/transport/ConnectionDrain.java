package io.rdmareactive.rdma.transport;

import io.rdmareactive.rdma.loop.CompletionEventLoop;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * Runs a connection's drain ({@link ConnectionOperations#drainOnce}) one thread at a time, on the
 * connection's loop: a work-in-progress counter, as in Reactor's operators, so that whoever calls
 * {@link #drain} only enqueues, and a drain that throws costs its connection only, never the loop.
 */
final class ConnectionDrain {
  /** The connection's own logger: what a failing drain logs reads as before. */
  private static final Logger log = Loggers.getLogger(ConnectionOperations.class);

  private final ConnectionOperations connection;
  private final CompletionEventLoop loop;
  private final ConnectionCloser closer;
  private final AtomicInteger wip = new AtomicInteger();
  private final Runnable drainLoop = this::drainLoop;
  private int drainFailures;
  /**
   * The loop thread is inside a pass ({@code passing}), and something asked for another since it
   * began ({@code again}). A request from inside a pass (a subscriber's onNext, a release, a
   * request for more, all on the loop thread) sets {@code again} rather than the atomic counter:
   * an atomic increment is a full fence, and a message made several such requests per side.
   * Only the loop thread sets either to true, and only it acts on them.
   */
  private boolean passing;
  private boolean again;

  ConnectionDrain(ConnectionOperations connection, CompletionEventLoop loop, ConnectionCloser closer) {
    this.connection = connection;
    this.loop = loop;
    this.closer = closer;
  }

  /**
   * Runs the connection's work, on its loop: a drain that another thread starts (a request, a
   * send, a dispose, the CM thread's disconnect) is handed to the loop, as Reactor Netty hands
   * work to a channel's event loop, so credits, sends and receives are posted by one thread.
   */
  void drain() {
    if (loop.inLoop() && passing) {
      again = true; // the pass in progress runs once more before it gives the counter back
      return;
    }
    if (wip.getAndIncrement() != 0) {
      return;
    }
    if (!loop.inLoop() && loop.execute(drainLoop)) {
      return; // the loop runs drainLoop with the work-in-progress count this call took
    }
    drainLoop();
  }

  /**
   * Makes every drain run that finished visible to the calling thread: a run writes the
   * connection's state as plain fields and ends with a write to the counter this reads (passes it
   * re-ran for requests made inside it end together with it).
   */
  void synchronize() {
    wip.get();
  }

  private void drainLoop() {
    int missed = 1;
    for (;;) {
      again = false;
      passing = loop.inLoop(); // only the loop thread takes requests through 'again'
      try {
        connection.drainOnce();
        drainFailures = 0;
      } catch (Throwable t) {
        passing = false;
        // A user callback threw (onNext, a send's subscriber), or an Error such as an
        // OutOfMemoryError came: this connection fails and closes, the loop and its other
        // connections go on. Nothing is handed over twice: the ring and the queues take each item
        // out before its callback runs, so the next pass only carries the close forward.
        if (connection.failure() == null) {
          log.error("rdma-reactive: " + connection + " failed in its drain; closing it", t);
        }
        connection.fail(t);
        if (++drainFailures < 4) {
          continue; // once more, now failing: the lifecycle takes it from here
        }
        log.error("rdma-reactive: " + connection + " keeps failing; freeing it without waiting for its work requests", t);
        closer.abandon();
        drainFailures = 0;
      }
      passing = false;
      if (again) {
        continue;
      }
      missed = wip.addAndGet(-missed);
      if (missed == 0) {
        return;
      }
    }
  }
}
