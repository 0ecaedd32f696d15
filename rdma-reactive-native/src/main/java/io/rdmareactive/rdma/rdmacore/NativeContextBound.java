package io.rdmareactive.rdma.rdmacore;

/** A native verbs object of one device context. */
interface NativeContextBound {
  NativeContext nativeContext();
}
