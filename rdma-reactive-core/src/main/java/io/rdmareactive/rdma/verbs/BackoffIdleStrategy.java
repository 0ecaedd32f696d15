package io.rdmareactive.rdma.verbs;

import java.util.concurrent.locks.LockSupport;

/** Spin, then yield, then park with exponential periods (Agrona's BackoffIdleStrategy, simplified). */
final class BackoffIdleStrategy implements IdleStrategy {
  private final int maxSpins;
  private final int maxYields;
  private final long minParkNanos;
  private final long maxParkNanos;
  private int spins;
  private int yields;
  private long parkNanos;

  BackoffIdleStrategy(int maxSpins, int maxYields, long minParkNanos, long maxParkNanos) {
    this.maxSpins = maxSpins;
    this.maxYields = maxYields;
    this.minParkNanos = minParkNanos;
    this.maxParkNanos = maxParkNanos;
    this.parkNanos = minParkNanos;
  }

  @Override
  public void idle(int workCount) {
    if (workCount > 0) {
      reset();
    } else if (spins < maxSpins) {
      spins++;
      Thread.onSpinWait();
    } else if (yields < maxYields) {
      yields++;
      Thread.yield();
    } else {
      LockSupport.parkNanos(parkNanos);
      parkNanos = Math.min(parkNanos << 1, maxParkNanos);
    }
  }

  @Override
  public void reset() {
    spins = 0;
    yields = 0;
    parkNanos = minParkNanos;
  }

  @Override
  public IdleStrategy copy() {
    return new BackoffIdleStrategy(maxSpins, maxYields, minParkNanos, maxParkNanos);
  }
}
