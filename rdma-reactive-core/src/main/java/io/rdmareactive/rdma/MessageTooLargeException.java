package io.rdmareactive.rdma;

/** A message exceeds the maximum the connection or queue pair accepts. Nothing was sent. */
public class MessageTooLargeException extends RdmaException {
  private static final long serialVersionUID = 1L;

  /** A message of {@code size} bytes against the {@code maximum} accepted. */
  public MessageTooLargeException(long size, long maximum) {
    super("message of " + size + " bytes exceeds the maximum of " + maximum + " bytes");
  }
}
