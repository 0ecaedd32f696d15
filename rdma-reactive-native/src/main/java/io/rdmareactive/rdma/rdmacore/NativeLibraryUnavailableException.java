package io.rdmareactive.rdma.rdmacore;

import io.rdmareactive.rdma.RdmaException;
import org.jspecify.annotations.Nullable;

/** libibverbs or librdmacm could not be loaded; the message names the packages to install. */
public final class NativeLibraryUnavailableException extends RdmaException {
  private static final long serialVersionUID = 1L;

  NativeLibraryUnavailableException(String library, @Nullable Throwable cause) {
    super(library + " could not be loaded. Install rdma-core's user-space libraries: "
        + "Debian/Ubuntu: apt-get install libibverbs1 ibverbs-providers librdmacm1; "
        + "RHEL/Fedora: dnf install rdma-core libibverbs librdmacm", cause);
  }
}
