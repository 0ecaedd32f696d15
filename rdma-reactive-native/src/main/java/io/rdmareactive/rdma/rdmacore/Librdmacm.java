package io.rdmareactive.rdma.rdmacore;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandle;

/**
 * The librdmacm binding: each function bound once, called with {@code invokeExact} at the call
 * site. Handles of calls that report errors as -1 (or NULL) with errno take {@link
 * Native#callState()} first; the others take the C arguments only. A host without librdmacm
 * fails only when the CM is used: the handles then throw {@link NativeLibraryUnavailableException}.
 */
final class Librdmacm {
  static final String LIBRARY = "librdmacm.so.1";
  private static final Native.Library LIB = Native.library(LIBRARY);

  static final MethodHandle GETADDRINFO = errno("rdma_getaddrinfo", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
  static final MethodHandle FREEADDRINFO = plain("rdma_freeaddrinfo", FunctionDescriptor.ofVoid(ADDRESS));
  static final MethodHandle CREATE_EP = errno("rdma_create_ep", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
  static final MethodHandle DESTROY_EP = plain("rdma_destroy_ep", FunctionDescriptor.ofVoid(ADDRESS));
  static final MethodHandle CREATE_ID = errno("rdma_create_id", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT));
  static final MethodHandle LISTEN = errno("rdma_listen", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
  static final MethodHandle GET_REQUEST = errno("rdma_get_request", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
  static final MethodHandle ACCEPT = errno("rdma_accept", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
  static final MethodHandle REJECT = errno("rdma_reject", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_BYTE));
  static final MethodHandle CONNECT = errno("rdma_connect", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
  static final MethodHandle DISCONNECT = errno("rdma_disconnect", FunctionDescriptor.of(JAVA_INT, ADDRESS));
  static final MethodHandle CREATE_EVENT_CHANNEL = errno("rdma_create_event_channel", FunctionDescriptor.of(ADDRESS));
  static final MethodHandle DESTROY_EVENT_CHANNEL = plain("rdma_destroy_event_channel", FunctionDescriptor.ofVoid(ADDRESS));
  static final MethodHandle MIGRATE_ID = errno("rdma_migrate_id", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
  static final MethodHandle GET_CM_EVENT = errno("rdma_get_cm_event", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
  static final MethodHandle ACK_CM_EVENT = errno("rdma_ack_cm_event", FunctionDescriptor.of(JAVA_INT, ADDRESS));
  static final MethodHandle RESOLVE_ADDR = errno("rdma_resolve_addr", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT));
  static final MethodHandle RESOLVE_ROUTE = errno("rdma_resolve_route", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
  static final MethodHandle CREATE_QP = errno("rdma_create_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
  static final MethodHandle DESTROY_QP = plain("rdma_destroy_qp", FunctionDescriptor.ofVoid(ADDRESS));
  static final MethodHandle BIND_ADDR = errno("rdma_bind_addr", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
  static final MethodHandle GET_SRC_PORT = plain("rdma_get_src_port", FunctionDescriptor.of(JAVA_SHORT, ADDRESS));
  static final MethodHandle GET_DEVICES = plain("rdma_get_devices", FunctionDescriptor.of(ADDRESS, ADDRESS));
  static final MethodHandle FREE_DEVICES = plain("rdma_free_devices", FunctionDescriptor.ofVoid(ADDRESS));
  static final MethodHandle EVENT_STR = plain("rdma_event_str", FunctionDescriptor.of(ADDRESS, JAVA_INT));

  private Librdmacm() {}

  /** Throws {@link NativeLibraryUnavailableException} when librdmacm or one of its symbols is missing. */
  static void check() {
    LIB.check();
  }

  private static MethodHandle errno(String name, FunctionDescriptor fd) {
    return LIB.bind(name, fd, true);
  }

  private static MethodHandle plain(String name, FunctionDescriptor fd) {
    return LIB.bind(name, fd, false);
  }
}
