package io.rdmareactive.rdma.verbs;

/** One completed work request, detached from native memory. */
public record WorkCompletion(long wrId, Status status, Opcode opcode, int vendorError, int byteLength,
    int immediateData, boolean hasImmediate, int qpNumber, int sourceQp) {

  public boolean isSuccess() {
    return status == Status.SUCCESS;
  }

  /** enum ibv_wc_status, in order. */
  public enum Status { SUCCESS, LOC_LEN_ERR, LOC_QP_OP_ERR, LOC_EEC_OP_ERR, LOC_PROT_ERR, WR_FLUSH_ERR,
    MW_BIND_ERR, BAD_RESP_ERR, LOC_ACCESS_ERR, REM_INV_REQ_ERR, REM_ACCESS_ERR, REM_OP_ERR,
    RETRY_EXC_ERR, RNR_RETRY_EXC_ERR, LOC_RDD_VIOL_ERR, REM_INV_RD_REQ_ERR, REM_ABORT_ERR,
    INV_EECN_ERR, INV_EEC_STATE_ERR, FATAL_ERR, RESP_TIMEOUT_ERR, GENERAL_ERR, TM_ERR,
    TM_RNDV_INCOMPLETE, UNKNOWN;
    private static final Status[] VALUES = values();
    public static Status of(int code) {
      return code >= 0 && code < UNKNOWN.ordinal() ? VALUES[code] : UNKNOWN;
    }
  }

  /** enum ibv_wc_opcode (sends 0..6, receives from 128). */
  public enum Opcode { SEND(0), RDMA_WRITE(1), RDMA_READ(2), COMP_SWAP(3), FETCH_ADD(4), BIND_MW(5),
    LOCAL_INV(6), RECV(128), RECV_RDMA_WITH_IMM(129), UNKNOWN(-1);
    private final int code;
    Opcode(int code) {
      this.code = code;
    }
    public int code() {
      return code;
    }
    public static Opcode of(int code) {
      return switch (code) {
        case 0 -> SEND; case 1 -> RDMA_WRITE; case 2 -> RDMA_READ; case 3 -> COMP_SWAP;
        case 4 -> FETCH_ADD; case 5 -> BIND_MW; case 6 -> LOCAL_INV; case 128 -> RECV;
        case 129 -> RECV_RDMA_WITH_IMM; default -> UNKNOWN;
      };
    }
    public boolean isReceive() {
      return code >= 128;
    }
  }
}
