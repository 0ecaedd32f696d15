package io.rdmareactive.rdma.loop;

import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.conformance.LeakCheck;
import io.rdmareactive.rdma.conformance.Loopback;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.AfterMethod;
import org.testng.annotations.BeforeMethod;

/**
 * Proves that {@link CompletionQueue#completions()} follows the Reactive Streams specification:
 * the TCK's {@link PublisherVerification}, provider-neutral (the in-memory provider runs it on the
 * host, the native module subclasses it in TestNG group {@code native} to run it on rxe0), in
 * event mode (a CQ on a completion channel, served by the channel's loop thread). A publisher of
 * {@code n} elements is the stream of a fresh loopback's CQ while a feeder thread posts {@code n}
 * RDMA writes, as fast as the send queue has room, but never more than the CQ holds: on rxe a send
 * slot is free again once its completion is written, not polled, so an unbounded feeder would
 * overflow the CQ of a subscriber that stopped requesting (the TCK takes at most 20 elements of
 * any publisher). The failed publisher is the stream of a closed CQ.
 *
 * <p>A completion stream never completes (a CQ has no last completion), so this tells the TCK
 * {@code maxElementsFromPublisher() == Long.MAX_VALUE}, and the TCK itself skips, with its reason,
 * the rules that need an {@code onComplete}. After each test every loopback and the context are
 * closed, the feeders ended without error, and no verbs object outlives the test.
 */
public abstract class AbstractCompletionsPublisherTckTest extends PublisherVerification<WorkCompletion> {
  private static final int QP_DEPTH = 64;
  private static final Duration WAIT = Duration.ofSeconds(30);

  private final List<Loopback> loopbacks = new ArrayList<>();
  private final List<Thread> feeders = new ArrayList<>();
  private final AtomicReference<Throwable> feederFailure = new AtomicReference<>();
  private volatile boolean stopFeeding;
  private RdmaContext context;
  private Map<String, Integer> liveBefore = Map.of();

  /**
   * @param timeoutMillis the TCK's default timeout (also how long {@code verifyNoAsyncErrors()} waits)
   * @param noSignalMillis how long the TCK waits to see that no signal comes
   * @param gcTimeoutMillis how long after a cancel the publisher may still hold its subscriber (rule 3.13)
   */
  protected AbstractCompletionsPublisherTckTest(long timeoutMillis, long noSignalMillis, long gcTimeoutMillis) {
    super(new TestEnvironment(timeoutMillis, noSignalMillis), gcTimeoutMillis);
  }

  /** Opens a fresh context on the device under test; the test closes it. */
  protected abstract RdmaContext openContext();

  /** GID index for the loopback's CM-less connect (RoCE needs the right one; in-memory takes any). */
  protected int gidIndex() {
    return 0;
  }

  /** Live verbs objects by type; compared before and after each test. */
  protected abstract Map<String, Integer> liveResources();

  @BeforeMethod
  public void openContextAndSnapshot() {
    liveBefore = liveResources();
    stopFeeding = false;
    feederFailure.set(null);
    context = openContext();
  }

  @AfterMethod(alwaysRun = true)
  public void closeAndCheckNothingLeaked() throws InterruptedException {
    stopFeeding = true;
    for (Thread t : feeders) {
      t.join(TimeUnit.SECONDS.toMillis(10));
    }
    feeders.clear();
    for (Loopback l : loopbacks) {
      // Some TCK tests end with their subscriber still subscribed (an infinite stream only ends
      // by cancel); cancel it as that subscriber would, or the CQ stays leased and cannot close.
      if (l.cq instanceof io.rdmareactive.rdma.spi.AbstractRdmaResource r
          && r.consumer() instanceof CompletionRegistration s) {
        s.cancel();
      }
      l.close();
    }
    loopbacks.clear();
    context.close();
    LeakCheck.awaitSame(this::liveResources, liveBefore, WAIT);
    Throwable failure = feederFailure.get();
    if (failure != null) {
      throw new AssertionError("a feeder failed", failure);
    }
  }

  @Override
  public long maxElementsFromPublisher() {
    return Long.MAX_VALUE; // never completes
  }

  /** A loopback's CQ stream, fed {@code elements} write completions (at most a CQ's worth) by a thread of its own. */
  @Override
  public Publisher<WorkCompletion> createPublisher(long elements) {
    Loopback l = new Loopback(context, gidIndex(), QP_DEPTH, true);
    loopbacks.add(l);
    long fed = Math.min(elements, l.cq.depth());
    if (fed > 0) {
      // A thread, not a loop here: the send queue holds QP_DEPTH writes until their completions
      // are written (rxe) or polled (in-memory), and the elements are taken only on demand.
      Thread feeder = Thread.ofPlatform().daemon().name("tck-feeder").unstarted(() -> feed(l, fed));
      feeders.add(feeder);
      feeder.start();
    }
    return l.cq.completions();
  }

  private void feed(Loopback l, long elements) {
    try {
      for (long id = 0; id < elements && !stopFeeding; ) {
        try {
          l.write(id);
          id++;
        } catch (NativeCallException e) {
          if (e.errno() != NativeCallException.ENOMEM) {
            throw e;
          }
          LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(200)); // the send queue is full: not polled yet
        }
      }
    } catch (Throwable e) {
      feederFailure.compareAndSet(null, e);
    }
  }

  /** The stream of a closed CQ: onSubscribe, then onError(ResourceClosedException). */
  @Override
  public Publisher<WorkCompletion> createFailedPublisher() {
    CompletionQueue cq = context.createCompletionQueue(4, null);
    cq.close();
    return cq.completions();
  }
}
