package io.rdmareactive.rdma.verbs;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * A completion channel (ibv_create_comp_channel): CQs bound to it report "a completion arrived"
 * events through it, so one thread can wait for several CQs. Each channel gets its own event loop
 * thread in the completion streams, which is how completions are steered to threads. Closing
 * fails with {@link io.rdmareactive.rdma.ResourceBusyException} while a CQ still uses it.
 *
 * <p>The event methods are the raw primitives the completion streams are built on; most users
 * call {@link CompletionQueue#completions()} instead.
 */
public interface CompletionChannel extends RdmaResource {
  /** The device context the channel belongs to. */
  RdmaContext context();

  /**
   * Waits up to {@code timeout} for an event to be ready. Blocks: call only from an event-loop
   * thread of your own. Returns early (false when no event is ready) after {@link #wakeup()}, and
   * when the channel is closed meanwhile: closing must never leave a waiter on a freed channel.
   */
  boolean awaitEvent(Duration timeout);

  /** The CQ of the next event (ibv_get_cq_event), or null when none is ready. Never blocks. */
  @Nullable CompletionQueue nextEvent();

  /**
   * Makes a concurrent {@link #awaitEvent} (or the next one) return promptly, so that an event
   * loop serves a subscriber's request or a new subscription at once instead of at the end of its
   * wait (as Netty's loops wake their selector). Thread-safe and never blocks; native providers
   * poll an eventfd beside the channel's fd. The default does nothing: waits then end only at
   * their timeout.
   */
  default void wakeup() {}
}
