package io.rdmareactive.rdma.verbs;

/** What ibv_query_port reports that users need. */
public record PortAttributes(PortState state, int maxMtu, int activeMtu, int lid, int gidTableLength,
    LinkLayer linkLayer) {

  /** Port state, as enum ibv_port_state. */
  public enum PortState {
    /** IBV_PORT_NOP: reserved. */
    NOP,
    /** IBV_PORT_DOWN: no link. */
    DOWN,
    /** IBV_PORT_INIT: link up, not yet configured by the subnet manager. */
    INIT,
    /** IBV_PORT_ARMED: configured, not yet active. */
    ARMED,
    /** IBV_PORT_ACTIVE: the port carries traffic. */
    ACTIVE,
    /** IBV_PORT_ACTIVE_DEFER: active, with deferred errors. */
    ACTIVE_DEFER,
    /** A state this library does not know. */
    UNKNOWN;
    /** The state of an {@code ibv_port_state} value; {@link #UNKNOWN} for others. */
    public static PortState of(int value) {
      return value >= 0 && value < UNKNOWN.ordinal() ? values()[value] : UNKNOWN;
    }
  }

  /** Link layer of the port. */
  public enum LinkLayer {
    /** IBV_LINK_LAYER_UNSPECIFIED: the driver does not say (InfiniBand, in practice). */
    UNSPECIFIED,
    /** IBV_LINK_LAYER_INFINIBAND. */
    INFINIBAND,
    /** IBV_LINK_LAYER_ETHERNET: RoCE, Soft-RoCE included. */
    ETHERNET,
    /** A link layer this library does not know. */
    UNKNOWN;
    /** The link layer of an {@code IBV_LINK_LAYER_*} value; {@link #UNKNOWN} for others. */
    public static LinkLayer of(int value) {
      return value >= 0 && value < UNKNOWN.ordinal() ? values()[value] : UNKNOWN;
    }
  }

  /** MTU enum value (1=256 ... 5=4096) as bytes. */
  public static int mtuBytes(int mtuEnum) {
    return mtuEnum >= 1 && mtuEnum <= 5 ? 128 << mtuEnum : 0;
  }
}
