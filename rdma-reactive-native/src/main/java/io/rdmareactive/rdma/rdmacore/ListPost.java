package io.rdmareactive.rdma.rdmacore;

import io.rdmareactive.rdma.verbs.WorkRequestBatch;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * How one batch is posted as a chained list, for sends and receives alike. The requests are
 * checked and given ledger slots in order; the first that fails stops the list there (those before
 * it are posted, then its failure is thrown), and a failure of the call itself gives back the
 * slots from the request bad_wr names on: {@link WorkRequestBatch#posted()} is exact on every path.
 * Its queue pair makes one per direction, once, and calls it under its monitor.
 *
 * @param <R> the request type
 */
abstract class ListPost<R> {
  /** The flyweights, at least {@code n} of them. */
  abstract ChainedWr[] chain(int n);

  /** Checks {@code r} and takes its ledger slot; returns the ledger's number before it. */
  abstract long begin(R r);

  /** Fills flyweight {@code i} of the chain from {@code r}. */
  abstract void fill(int i, R r);

  /** The post itself, {@code badWr} for the provider to name the failed request in: 0 or an errno value. */
  abstract int call(MemorySegment head, MemorySegment badWr);

  /** Gives the ledger slots back from number {@code number} on. */
  abstract void abort(long number);

  /** The C function named in errors. */
  abstract String function();

  final void post(WorkRequestBatch<R> batch, Object owner, MemorySegment badWr) {
    batch.posted(0);
    int size = batch.size();
    if (size == 0) {
      return;
    }
    ChainedWr[] chain = chain(size);
    long first = -1;
    int n = 0;
    RuntimeException stop = null;
    for (; n < size; n++) {
      R r = batch.get(n);
      try {
        long p = begin(r);
        if (n == 0) {
          first = p;
        }
      } catch (RuntimeException e) {
        stop = e;
        break;
      }
      fill(n, r);
      if (n > 0) {
        chain[n - 1].next(chain[n].segment());
      }
    }
    if (n == 0) {
      throw Objects.requireNonNull(stop);
    }
    chain[n - 1].next(MemorySegment.NULL);
    int rc;
    try {
      rc = call(chain[0].segment(), badWr);
    } catch (RuntimeException | Error e) {
      abort(first);
      throw e;
    }
    if (rc != 0) {
      int bad = PostChains.indexOf(chain, n, badWr.get(java.lang.foreign.ValueLayout.ADDRESS, 0));
      abort(first + bad);
      batch.posted(bad);
      throw Native.failure(function(), Math.abs(rc), owner + ", at work request " + bad + " of a list of " + n
          + " (the " + bad + " before it are posted)");
    }
    batch.posted(n);
    if (stop != null) {
      throw stop;
    }
  }
}
