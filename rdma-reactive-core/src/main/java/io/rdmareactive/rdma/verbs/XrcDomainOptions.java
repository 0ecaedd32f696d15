package io.rdmareactive.rdma.verbs;

import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/**
 * How to open an XRC domain (seed ibv_open_xrcd). A {@code file}'s inode names the domain so that
 * processes opening the same file share it; {@code create} is O_CREAT, {@code exclusive} is O_EXCL
 * (with create: fails with {@link io.rdmareactive.rdma.AlreadyExistsException} when a domain for
 * that inode exists). No file: a private domain.
 */
public record XrcDomainOptions(@Nullable Path file, boolean create, boolean exclusive) {

  /** Checks that {@code exclusive} comes with {@code create}, and that a private domain (no file) is created. */
  public XrcDomainOptions {
    if (exclusive && !create) {
      throw new IllegalArgumentException("exclusive needs create (O_EXCL is only meaningful with O_CREAT)");
    }
    if (file == null && !create) {
      throw new IllegalArgumentException("a private XRC domain (no file) must be created");
    }
  }

  /** A domain no other process can open. */
  public static XrcDomainOptions privateDomain() {
    return new XrcDomainOptions(null, true, false);
  }

  /** Opens the domain named by {@code file}'s inode, creating it if needed. */
  public static XrcDomainOptions shared(Path file) {
    return new XrcDomainOptions(file, true, false);
  }

  /** Opens only an existing domain named by {@code file}'s inode. */
  public static XrcDomainOptions existing(Path file) {
    return new XrcDomainOptions(file, false, false);
  }

  /** Creates a new domain for {@code file}'s inode; fails if one exists. */
  public static XrcDomainOptions exclusive(Path file) {
    return new XrcDomainOptions(file, true, true);
  }
}
