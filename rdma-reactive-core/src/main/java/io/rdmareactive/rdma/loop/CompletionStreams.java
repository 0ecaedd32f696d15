package io.rdmareactive.rdma.loop;

import io.rdmareactive.rdma.verbs.CompletionQueue;
import io.rdmareactive.rdma.verbs.CompletionStreamOptions;
import io.rdmareactive.rdma.verbs.WorkCompletion;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;

/**
 * Builds the verbs API's completion streams ({@link CompletionQueue#completions()}) over a CQ's
 * raw verbs, each a {@link CompletionHandler} on a {@link CompletionEventLoop}.
 *
 * <p>Event mode: the CQs of one completion channel are served by one loop thread, the one waiting
 * on that channel ({@code rdma-cq-N}, or the transport loop's when the channel is one of theirs;
 * a {@link reactor.core.scheduler.NonBlocking} daemon, so BlockHound reports blocking calls made
 * in {@code onNext} there, as on Netty's loops). The channel itself names its loop (its consumer),
 * so no registry sits beside it; a stream's loop ends once it serves no CQ. A stream polls no more
 * than its subscriber's outstanding demand, in the race-free order poll until empty, arm, poll
 * again; at zero demand it stops polling and the completions wait in the CQ. {@code request(n)}
 * only schedules a drain on the loop thread (and wakes it), never polls on the caller's thread.
 *
 * <p>Busy-poll mode: a loop of its own per stream ({@code rdma-poll-N}), polling while there is
 * demand with the options' idle strategy between empty polls, parked while there is none.
 *
 * <p>Either way a subscribed stream holds a lease on the CQ (when it is an {@link
 * io.rdmareactive.rdma.spi.AbstractRdmaResource}), so closing the CQ under it fails with {@link
 * io.rdmareactive.rdma.ResourceBusyException}; cancelling, an error or the failure of a poll stop
 * the polling, acknowledge the events taken and release the lease before the canceller returns or
 * the error is signalled. One consumer at a time per CQ, held by the CQ itself.
 */
public final class CompletionStreams {
  private CompletionStreams() {}

  public static Flux<WorkCompletion> completions(CompletionQueue cq, CompletionStreamOptions options) {
    return new CompletionFlux(cq, options);
  }

  /** Whether {@code cq} has a consumer now: a subscribed completion stream, or a connection's loop. */
  public static boolean isStreaming(CompletionQueue cq) {
    return CompletionRegistration.consumerOf(cq) != null;
  }

  private static final class CompletionFlux extends Flux<WorkCompletion> {
    private final CompletionQueue cq;
    private final CompletionStreamOptions options;

    CompletionFlux(CompletionQueue cq, CompletionStreamOptions options) {
      this.cq = cq;
      this.options = options;
    }

    @Override
    public void subscribe(CoreSubscriber<? super WorkCompletion> actual) {
      CompletionStreamOptions.Mode mode = options.effectiveMode(cq.channel());
      if (mode == CompletionStreamOptions.Mode.EVENT && cq.channel() == null) {
        Operators.error(actual, new IllegalArgumentException(
            "EVENT mode needs a CQ with a completion channel; " + cq + " has none"));
        return;
      }
      CompletionSubscription s = new CompletionSubscription(actual, cq, options);
      try {
        s.attach(mode); // on subscription, not assembly: fails here if the CQ is taken or closed
      } catch (RuntimeException e) {
        Operators.error(actual, e);
        return;
      }
      actual.onSubscribe(s);
    }
  }
}
