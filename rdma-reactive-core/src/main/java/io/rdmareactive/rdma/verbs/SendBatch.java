package io.rdmareactive.rdma.verbs;

/**
 * A reusable list of send work requests posted with one {@link QueuePair#postSend(SendBatch)}: one
 * {@code ibv_post_send} of a chained list, so one doorbell (on rxe one system call) for all of
 * them. Its requests are flyweights made once; filling and posting allocate nothing. Not
 * thread-safe: one per posting thread.
 *
 * <p>A post may be partial, as {@code ibv_post_send} reports through {@code bad_wr}: the requests
 * before the first one that failed are posted (their completions come as usual), that one and
 * those after it are not. {@link #posted()} says how many were taken after every post, failed or
 * not.
 */
public final class SendBatch {
  private final SendRequest[] requests;
  private int size;
  private int posted;

  /** A batch of up to {@code capacity} requests, each with room for {@code maxScatterGather} entries. */
  public SendBatch(int capacity, int maxScatterGather) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be >= 1");
    }
    requests = new SendRequest[capacity];
    for (int i = 0; i < capacity; i++) {
      requests[i] = new SendRequest(maxScatterGather);
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
   * The next request, appended: a signaled SEND with no entries, to fill in.
   *
   * @throws IllegalStateException when the batch is full
   */
  public SendRequest add() {
    if (size == requests.length) {
      throw new IllegalStateException("send batch is full (" + requests.length + " requests)");
    }
    SendRequest r = requests[size++];
    r.reset(0, SendRequest.Opcode.SEND);
    return r;
  }

  /** Request {@code i}, in posting order. */
  public SendRequest get(int i) {
    if (i < 0 || i >= size) {
      throw new IndexOutOfBoundsException(i);
    }
    return requests[i];
  }

  /** Removes every request (the flyweights stay for reuse). */
  public SendBatch clear() {
    size = 0;
    posted = 0;
    return this;
  }

  /**
   * How many requests, from the first, the last post took: all of them after a post that returned,
   * fewer after one that threw (the rest were not posted and will not complete).
   */
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
