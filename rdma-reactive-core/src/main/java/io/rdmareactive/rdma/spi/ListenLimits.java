package io.rdmareactive.rdma.spi;

import java.time.Duration;
import java.util.Objects;

/**
 * How long and how many connect requests a {@link Listener} keeps waiting for its subscriber's
 * demand. A request that finds the queue full, or that waits longer than {@code requestTimeout},
 * is rejected with {@code busyReject} as the reject's private data and freed.
 *
 * @param backlog requests waiting at most (at least 1)
 * @param requestTimeout the longest a request waits (positive)
 * @param busyReject private data of those rejects (at most {@link EndpointOptions#MAX_PRIVATE_DATA} bytes)
 */
public record ListenLimits(int backlog, Duration requestTimeout, byte[] busyReject) {
  /** 128 requests, 10 seconds, an empty reject. */
  public static final ListenLimits DEFAULTS = new ListenLimits(128, Duration.ofSeconds(10), new byte[0]);

  /** Checks the limits; the reject data is copied. */
  public ListenLimits {
    if (backlog < 1) {
      throw new IllegalArgumentException("backlog must be >= 1, was " + backlog);
    }
    if (Objects.requireNonNull(requestTimeout, "requestTimeout").isNegative() || requestTimeout.isZero()) {
      throw new IllegalArgumentException("requestTimeout must be positive, was " + requestTimeout);
    }
    if (busyReject.length > EndpointOptions.MAX_PRIVATE_DATA) {
      throw new IllegalArgumentException("reject data of " + busyReject.length + " bytes exceeds "
          + EndpointOptions.MAX_PRIVATE_DATA);
    }
    busyReject = busyReject.clone();
  }

  @Override
  public byte[] busyReject() {
    return busyReject.clone();
  }
}
