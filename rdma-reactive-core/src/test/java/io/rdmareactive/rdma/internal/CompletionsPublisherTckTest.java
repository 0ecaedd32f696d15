package io.rdmareactive.rdma.internal;

import io.rdmareactive.rdma.NativeCallException;
import io.rdmareactive.rdma.conformance.Loopback;
import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.RdmaContext;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.AfterMethod;
import org.testng.annotations.BeforeMethod;

/**
 * Proves that {@link CompletionQueue#completions()} follows the Reactive Streams specification:
 * the TCK's {@link PublisherVerification} on the in-memory provider, in event mode (a CQ on a
 * completion channel, served by the channel's loop thread). A publisher of {@code n} elements is
 * the stream of a fresh loopback's CQ while a feeder thread posts {@code n} RDMA writes, as fast
 * as the send queue has room. The failed publisher is the stream of a closed CQ.
 *
 * <p>A completion stream never completes (a CQ has no last completion), so this tells the TCK
 * {@code maxElementsFromPublisher() == Long.MAX_VALUE}, and the TCK itself skips, with its reason,
 * the rules that need an {@code onComplete}. After each test every loopback and the context are
 * closed and no in-memory verbs object outlives it.
 */
public class CompletionsPublisherTckTest extends PublisherVerification<WorkCompletion> {
  private static final long TIMEOUT_MILLIS = 1_000;
  private static final long NO_SIGNAL_MILLIS = 200;
  private static final int QP_DEPTH = 64;

  private final List<Loopback> loopbacks = new ArrayList<>();
  private final List<Thread> feeders = new ArrayList<>();
  private volatile boolean stopFeeding;
  private RdmaContext context;
  private Map<String, Integer> liveBefore = Map.of();

  public CompletionsPublisherTckTest() {
    super(new TestEnvironment(TIMEOUT_MILLIS, NO_SIGNAL_MILLIS));
  }

  @BeforeMethod
  public void openContext() {
    liveBefore = new InMemoryProvider().liveObjects();
    stopFeeding = false;
    context = new InMemoryProvider().open("mem0");
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
      CompletionSubscription s = CompletionStreams.ACTIVE.get(l.cq);
      if (s != null) {
        s.cancel();
      }
      l.close();
    }
    loopbacks.clear();
    context.close();
    Map<String, Integer> after = new InMemoryProvider().liveObjects();
    if (!after.equals(liveBefore)) {
      throw new AssertionError("live verbs objects after the test: " + after + ", before: " + liveBefore);
    }
  }

  @Override
  public long maxElementsFromPublisher() {
    return Long.MAX_VALUE; // never completes
  }

  /** A loopback's CQ stream, fed {@code elements} write completions by a thread of its own. */
  @Override
  public Publisher<WorkCompletion> createPublisher(long elements) {
    Loopback l = new Loopback(context, 0, QP_DEPTH, true);
    loopbacks.add(l);
    if (elements > 0) {
      // A thread, not a loop here: the send queue holds QP_DEPTH writes until their completions
      // are polled, and the TCK asks for up to Integer.MAX_VALUE elements, taken only on demand.
      Thread feeder = Thread.ofPlatform().daemon().name("tck-feeder").unstarted(() -> feed(l, elements));
      feeders.add(feeder);
      feeder.start();
    }
    return l.cq.completions();
  }

  private void feed(Loopback l, long elements) {
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
  }

  /** The stream of a closed CQ: onSubscribe, then onError(ResourceClosedException). */
  @Override
  public Publisher<WorkCompletion> createFailedPublisher() {
    CompletionQueue cq = context.createCompletionQueue(4, null);
    cq.close();
    return cq.completions();
  }
}
