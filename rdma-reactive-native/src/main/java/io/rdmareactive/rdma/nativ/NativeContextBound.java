package io.rdmareactive.rdma.nativ;

/** A native verbs object of one device context. */
interface NativeContextBound {
  NativeContext nativeContext();
}
