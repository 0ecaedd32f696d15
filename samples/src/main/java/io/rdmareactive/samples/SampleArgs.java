package io.rdmareactive.samples;

import io.rdmareactive.rdma.device.RdmaDevices;

/** Argument helpers shared by the plain (non-Boot) samples. */
final class SampleArgs {
  private SampleArgs() {}

  static String arg(String[] args, int i, String fallback) {
    return args.length > i ? args[i] : fallback;
  }

  static int port(String value) {
    try {
      int p = Integer.parseInt(value);
      if (p >= 0 && p <= 65_535) {
        return p;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException("port must be 0 .. 65535, was '" + value + "'");
  }

  /**
   * The provider {@code selection} resolves to ({@code auto}, {@code native}, {@code in-memory};
   * {@code default}: the {@code rdma.provider} / {@code RDMA_PROVIDER} selection), as a name the
   * transport's PROVIDER option takes.
   */
  static String provider(String selection) {
    return selection.equals("default") ? RdmaDevices.provider().name() : RdmaDevices.provider(selection).name();
  }
}
