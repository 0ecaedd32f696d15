package io.rdmareactive.rdma.verbs;

/** One completed work request, detached from native memory. */
public record WorkCompletion(long wrId, Status status, Opcode opcode, int vendorError, int byteLength,
    int immediateData, boolean hasImmediate, int qpNumber, int sourceQp) {

  /** Whether the status is {@link Status#SUCCESS}. */
  public boolean isSuccess() {
    return status == Status.SUCCESS;
  }

  /** enum ibv_wc_status, in order. */
  public enum Status {
    /** IBV_WC_SUCCESS: the work request completed. */
    SUCCESS,
    /** IBV_WC_LOC_LEN_ERR: a message longer than the receive buffer, or a length the QP does not accept. */
    LOC_LEN_ERR,
    /** IBV_WC_LOC_QP_OP_ERR: an internal QP consistency error (rxe: a send posted while the port went down). */
    LOC_QP_OP_ERR,
    /** IBV_WC_LOC_EEC_OP_ERR: an internal EE context error (RD only). */
    LOC_EEC_OP_ERR,
    /** IBV_WC_LOC_PROT_ERR: a local buffer not in a memory region of the QP's PD, or without the access asked for. */
    LOC_PROT_ERR,
    /** IBV_WC_WR_FLUSH_ERR: flushed, not executed, because the QP went to the error state. */
    WR_FLUSH_ERR,
    /** IBV_WC_MW_BIND_ERR: a memory window bind failed. */
    MW_BIND_ERR,
    /** IBV_WC_BAD_RESP_ERR: the responder answered with an unexpected transport opcode. */
    BAD_RESP_ERR,
    /** IBV_WC_LOC_ACCESS_ERR: a protection error on a local buffer of an incoming RDMA operation. */
    LOC_ACCESS_ERR,
    /** IBV_WC_REM_INV_REQ_ERR: the responder found the request invalid (e.g. a message longer than its receive buffer). */
    REM_INV_REQ_ERR,
    /** IBV_WC_REM_ACCESS_ERR: the responder found a protection error on the remote memory (bad key, address or access). */
    REM_ACCESS_ERR,
    /** IBV_WC_REM_OP_ERR: the responder could not complete the operation. */
    REM_OP_ERR,
    /** IBV_WC_RETRY_EXC_ERR: no acknowledgement within the transport retries (the peer or path is gone). */
    RETRY_EXC_ERR,
    /** IBV_WC_RNR_RETRY_EXC_ERR: the responder had no receive posted, within the RNR retries. */
    RNR_RETRY_EXC_ERR,
    /** IBV_WC_LOC_RDD_VIOL_ERR: a reliable-datagram domain violation (RD only). */
    LOC_RDD_VIOL_ERR,
    /** IBV_WC_REM_INV_RD_REQ_ERR: the responder rejected an RD request (RD only). */
    REM_INV_RD_REQ_ERR,
    /** IBV_WC_REM_ABORT_ERR: the responder aborted the operation. */
    REM_ABORT_ERR,
    /** IBV_WC_INV_EECN_ERR: an invalid EE context number (RD only). */
    INV_EECN_ERR,
    /** IBV_WC_INV_EEC_STATE_ERR: an invalid EE context state (RD only). */
    INV_EEC_STATE_ERR,
    /** IBV_WC_FATAL_ERR: a fatal error of the device. */
    FATAL_ERR,
    /** IBV_WC_RESP_TIMEOUT_ERR: the response timed out. */
    RESP_TIMEOUT_ERR,
    /** IBV_WC_GENERAL_ERR: any other error the device reports. */
    GENERAL_ERR,
    /** IBV_WC_TM_ERR: a tag-matching error. */
    TM_ERR,
    /** IBV_WC_TM_RNDV_INCOMPLETE: a tag-matching rendezvous that did not complete. */
    TM_RNDV_INCOMPLETE,
    /** A status code this library does not know (a newer rdma-core). */
    UNKNOWN;
    private static final Status[] VALUES = values();
    /** The status of an {@code ibv_wc_status} code; {@link #UNKNOWN} for codes past the known ones. */
    public static Status of(int code) {
      return code >= 0 && code < UNKNOWN.ordinal() ? VALUES[code] : UNKNOWN;
    }
  }

  /** enum ibv_wc_opcode (sends 0..6, receives from 128). */
  public enum Opcode {
    /** IBV_WC_SEND: a SEND (with or without immediate data) completed. */
    SEND(0),
    /** IBV_WC_RDMA_WRITE: an RDMA WRITE completed. */
    RDMA_WRITE(1),
    /** IBV_WC_RDMA_READ: an RDMA READ completed. */
    RDMA_READ(2),
    /** IBV_WC_COMP_SWAP: an atomic compare-and-swap completed. */
    COMP_SWAP(3),
    /** IBV_WC_FETCH_ADD: an atomic fetch-and-add completed. */
    FETCH_ADD(4),
    /** IBV_WC_BIND_MW: a memory window bind completed. */
    BIND_MW(5),
    /** IBV_WC_LOCAL_INV: a local invalidate completed. */
    LOCAL_INV(6),
    /** IBV_WC_RECV: a receive took an incoming SEND. */
    RECV(128),
    /** IBV_WC_RECV_RDMA_WITH_IMM: a receive took the immediate data of an incoming RDMA WRITE. */
    RECV_RDMA_WITH_IMM(129),
    /** An opcode this library does not know. */
    UNKNOWN(-1);
    private final int code;
    Opcode(int code) {
      this.code = code;
    }
    /** The {@code ibv_wc_opcode} value. */
    public int code() {
      return code;
    }
    /** The opcode of an {@code ibv_wc_opcode} value; {@link #UNKNOWN} for others. */
    public static Opcode of(int code) {
      return switch (code) {
        case 0 -> SEND; case 1 -> RDMA_WRITE; case 2 -> RDMA_READ; case 3 -> COMP_SWAP;
        case 4 -> FETCH_ADD; case 5 -> BIND_MW; case 6 -> LOCAL_INV; case 128 -> RECV;
        case 129 -> RECV_RDMA_WITH_IMM; default -> UNKNOWN;
      };
    }
    /** Whether this completes a receive (codes from 128) rather than a send-queue request. */
    public boolean isReceive() {
      return code >= 128;
    }
  }
}
