package io.rdmareactive.rdma.verbs;

/** Up to {@link #capacity()} (address, length, lkey) entries, reused across posts. */
public final class ScatterGatherList {
  private final long[] addresses;
  private final int[] lengths;
  private final int[] keys;
  private int count;

  /** A list with room for {@code capacity} entries (at least 1). */
  public ScatterGatherList(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be >= 1");
    }
    addresses = new long[capacity];
    lengths = new int[capacity];
    keys = new int[capacity];
  }

  /** How many entries it can hold. */
  public int capacity() {
    return addresses.length;
  }

  /** How many entries it holds. */
  public int count() {
    return count;
  }

  /** Removes every entry. */
  public ScatterGatherList clear() {
    count = 0;
    return this;
  }

  /**
   * Replaces its entries with a copy of {@code other}'s.
   *
   * @throws IllegalStateException when {@code other} holds more entries than this list's capacity
   */
  public ScatterGatherList set(ScatterGatherList other) {
    if (other.count > addresses.length) {
      throw new IllegalStateException("scatter/gather list is full (" + addresses.length + " entries)");
    }
    System.arraycopy(other.addresses, 0, addresses, 0, other.count);
    System.arraycopy(other.lengths, 0, lengths, 0, other.count);
    System.arraycopy(other.keys, 0, keys, 0, other.count);
    count = other.count;
    return this;
  }

  /** Appends an entry covering {@code length} bytes at {@code offset} of {@code region}. */
  public ScatterGatherList add(MemoryRegion region, long offset, int length) {
    if (offset < 0 || length < 0 || offset + length > region.length()) {
      throw new IndexOutOfBoundsException("[" + offset + ", " + (offset + length) + ") is outside the "
          + region.length() + "-byte memory region");
    }
    return add(region.address() + offset, length, region.localKey());
  }

  /** Appends a raw entry. */
  public ScatterGatherList add(long address, int length, int localKey) {
    if (count == addresses.length) {
      throw new IllegalStateException("scatter/gather list is full (" + addresses.length + " entries)");
    }
    addresses[count] = address;
    lengths[count] = length;
    keys[count] = localKey;
    count++;
    return this;
  }

  /** The address of entry {@code i}. */
  public long address(int i) {
    return addresses[check(i)];
  }

  /** The length in bytes of entry {@code i}. */
  public int length(int i) {
    return lengths[check(i)];
  }

  /** The local key of entry {@code i}'s memory region. */
  public int localKey(int i) {
    return keys[check(i)];
  }

  /** Sum of the entries' lengths. */
  public long totalLength() {
    long t = 0;
    for (int i = 0; i < count; i++) {
      t += lengths[i];
    }
    return t;
  }

  private int check(int i) {
    if (i < 0 || i >= count) {
      throw new IndexOutOfBoundsException(i);
    }
    return i;
  }
}
