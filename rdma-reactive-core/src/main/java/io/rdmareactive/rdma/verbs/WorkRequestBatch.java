package io.rdmareactive.rdma.verbs;

import java.util.function.IntFunction;

/**
 * A reusable list of work requests posted with one call (a chained list: one doorbell), the
 * common part of {@link SendBatch} and {@link ReceiveBatch}. Its requests are flyweights made
 * once; filling and posting allocate nothing. Not thread-safe: one per posting thread.
 *
 * <p>A post may be partial, as the verbs report through {@code bad_wr}: the requests before the
 * first one that failed are posted (their completions come as usual), that one and those after it
 * are not. {@link #posted()} says how many were taken after every post, failed or not.
 *
 * @param <R> the request type
 */
public abstract sealed class WorkRequestBatch<R> permits SendBatch, ReceiveBatch {
  private final Object[] requests;
  private int size;
  private int posted;

  WorkRequestBatch(int capacity, IntFunction<R> make) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be >= 1");
    }
    requests = new Object[capacity];
    for (int i = 0; i < capacity; i++) {
      requests[i] = make.apply(i);
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

  /** The next flyweight, appended, for the subclass to reset. */
  @SuppressWarnings("unchecked")
  final R append() {
    if (size == requests.length) {
      throw new IllegalStateException("batch is full (" + requests.length + " requests)");
    }
    return (R) requests[size++];
  }

  /** Request {@code i}, in posting order. */
  @SuppressWarnings("unchecked")
  public R get(int i) {
    if (i < 0 || i >= size) {
      throw new IndexOutOfBoundsException(i);
    }
    return (R) requests[i];
  }

  /** Removes every request (the flyweights stay for reuse) and the count of the last post. */
  public void clear() {
    size = 0;
    posted = 0;
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
