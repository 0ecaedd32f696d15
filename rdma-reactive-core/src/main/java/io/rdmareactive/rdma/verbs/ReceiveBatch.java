package io.rdmareactive.rdma.verbs;

/**
 * A reusable list of receive work requests posted with one {@link QueuePair#postReceive(ReceiveBatch)}
 * ({@code ibv_post_recv} of a chained list). Filling and posting allocate nothing; not thread-safe.
 * A post may be partial, as {@link SendBatch}'s: {@link #posted()} says how many were taken.
 */
public final class ReceiveBatch {
  private final ReceiveRequest[] requests;
  private int size;
  private int posted;

  /** A batch of up to {@code capacity} requests, each with room for {@code maxScatterGather} entries. */
  public ReceiveBatch(int capacity, int maxScatterGather) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be >= 1");
    }
    requests = new ReceiveRequest[capacity];
    for (int i = 0; i < capacity; i++) {
      requests[i] = new ReceiveRequest(maxScatterGather);
    }
  }

  /** How many requests it can hold. */
  public int capacity() {
    return requests.length;
  }

  /** How many requests it holds. */
  public int size() {
    return size;
  }

  /** Whether it holds no request. */
  public boolean isEmpty() {
    return size == 0;
  }

  /**
   * The next request, appended, with no entries, to fill in.
   *
   * @throws IllegalStateException when the batch is full
   */
  public ReceiveRequest add() {
    if (size == requests.length) {
      throw new IllegalStateException("receive batch is full (" + requests.length + " requests)");
    }
    ReceiveRequest r = requests[size++];
    r.scatterGather().clear();
    return r.wrId(0);
  }

  /** Request {@code i}, in posting order. */
  public ReceiveRequest get(int i) {
    if (i < 0 || i >= size) {
      throw new IndexOutOfBoundsException(i);
    }
    return requests[i];
  }

  /** Removes every request (the flyweights stay for reuse). */
  public ReceiveBatch clear() {
    size = 0;
    posted = 0;
    return this;
  }

  /** How many requests, from the first, the last post took (fewer than {@link #size()} after a failed one). */
  public int posted() {
    return posted;
  }

  /** For providers: records that the first {@code n} requests were posted. */
  public void posted(int n) {
    if (n < 0 || n > size) {
      throw new IllegalArgumentException(n + " posted of " + size);
    }
    posted = n;
  }
}
