package io.rdmareactive.rdma.inmemory;

import io.rdmareactive.rdma.verbs.ReceiveRequest;
import io.rdmareactive.rdma.verbs.ScatterGatherList;

/** A posted receive: a copy of the request, since the caller reuses its ReceiveRequest. */
record PostedReceive(long wrId, long[] addresses, int[] lengths, int[] keys) {
  static PostedReceive of(ReceiveRequest r) {
    ScatterGatherList sgl = r.scatterGather();
    int n = sgl.count();
    long[] a = new long[n];
    int[] l = new int[n];
    int[] k = new int[n];
    for (int i = 0; i < n; i++) {
      a[i] = sgl.address(i);
      l[i] = sgl.length(i);
      k[i] = sgl.localKey(i);
    }
    return new PostedReceive(r.wrId(), a, l, k);
  }

  long capacity() {
    long c = 0;
    for (int l : lengths) {
      c += l;
    }
    return c;
  }
}
