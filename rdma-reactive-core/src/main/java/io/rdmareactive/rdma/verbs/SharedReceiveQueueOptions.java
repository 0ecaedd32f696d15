package io.rdmareactive.rdma.verbs;

/** Capacity of an SRQ: work requests and scatter/gather entries each. */
public record SharedReceiveQueueOptions(int maxWorkRequests, int maxScatterGather, int limit) {
  /** Checks the sizes and the limit. */
  public SharedReceiveQueueOptions {
    if (maxWorkRequests < 1 || maxScatterGather < 1 || limit < 0) {
      throw new IllegalArgumentException("SRQ needs maxWorkRequests >= 1, maxScatterGather >= 1, limit >= 0");
    }
  }

  /** An SRQ of {@code maxWorkRequests} receives, one scatter entry each, no limit event. */
  public static SharedReceiveQueueOptions of(int maxWorkRequests) {
    return new SharedReceiveQueueOptions(maxWorkRequests, 1, 0);
  }
}
