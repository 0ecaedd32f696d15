package io.rdmareactive.rdma.verbs;

import java.util.concurrent.locks.LockSupport;

/**
 * What a busy-polling thread does after an empty poll (after Agrona's idle strategies). Instances
 * hold per-thread state: {@link #copy()} gives each thread its own.
 */
public interface IdleStrategy {
  /** Called with the amount of work the last poll did; idles when it was 0. */
  void idle(int workCount);

  /** Resets back-off after work was found. */
  default void reset() {}

  /** A fresh instance for another thread. */
  IdleStrategy copy();

  /** Spins (lowest latency, one core at 100%). */
  static IdleStrategy spin() {
    return new IdleStrategy() {
      @Override
      public void idle(int workCount) {
        if (workCount == 0) {
          Thread.onSpinWait();
        }
      }

      @Override
      public IdleStrategy copy() {
        return this;
      }
    };
  }

  /** Yields the CPU after each empty poll. */
  static IdleStrategy yielding() {
    return new IdleStrategy() {
      @Override
      public void idle(int workCount) {
        if (workCount == 0) {
          Thread.yield();
        }
      }

      @Override
      public IdleStrategy copy() {
        return this;
      }
    };
  }

  /** Parks for {@code nanos} after each empty poll. */
  static IdleStrategy parking(long nanos) {
    return new IdleStrategy() {
      @Override
      public void idle(int workCount) {
        if (workCount == 0) {
          LockSupport.parkNanos(nanos);
        }
      }

      @Override
      public IdleStrategy copy() {
        return this;
      }
    };
  }

  /** Spins, then yields, then parks with growing periods up to 1 ms. */
  static IdleStrategy backoff() {
    return new BackoffIdleStrategy(100, 100, 1_000, 1_000_000);
  }
}
