package io.rdmareactive.rdma.verbs;

/** What ibv_query_port reports that users need. */
public record PortAttributes(PortState state, int maxMtu, int activeMtu, int lid, int gidTableLength,
    LinkLayer linkLayer) {

  /** Port state, as enum ibv_port_state. */
  public enum PortState { NOP, DOWN, INIT, ARMED, ACTIVE, ACTIVE_DEFER, UNKNOWN;
    public static PortState of(int value) {
      return value >= 0 && value < UNKNOWN.ordinal() ? values()[value] : UNKNOWN;
    }
  }

  /** Link layer of the port. */
  public enum LinkLayer { UNSPECIFIED, INFINIBAND, ETHERNET, UNKNOWN;
    public static LinkLayer of(int value) {
      return value >= 0 && value < UNKNOWN.ordinal() ? values()[value] : UNKNOWN;
    }
  }

  /** MTU enum value (1=256 ... 5=4096) as bytes. */
  public static int mtuBytes(int mtuEnum) {
    return mtuEnum >= 1 && mtuEnum <= 5 ? 128 << mtuEnum : 0;
  }
}
