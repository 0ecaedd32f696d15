package io.rdmareactive.rsocket;

/**
 * What may wait for the peer's credits per connection: at most {@code frames} frames and
 * {@code bytes} bytes of them. RSocket hands frames to its transport without backpressure, so a
 * requester's REQUEST_N times the frame size must fit both; beyond either the connection closes.
 */
record PendingLimit(int frames, long bytes) {
  static final PendingLimit DEFAULT =
      new PendingLimit(RdmaClientTransport.DEFAULT_MAX_PENDING_FRAMES, RdmaClientTransport.DEFAULT_MAX_PENDING_BYTES);

  PendingLimit {
    if (frames < 1) {
      throw new IllegalArgumentException("maxPendingFrames must be positive: " + frames);
    }
    if (bytes < 1) {
      throw new IllegalArgumentException("maxPendingBytes must be positive: " + bytes);
    }
  }

  PendingLimit frames(int n) {
    return new PendingLimit(n, bytes);
  }

  PendingLimit bytes(long n) {
    return new PendingLimit(frames, n);
  }
}
