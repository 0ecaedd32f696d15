package io.rdmareactive.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import io.rdmareactive.rdma.verbs.ProtectionDomain;
import io.rdmareactive.rdma.verbs.RdmaContext;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The batch decoder on its own, against peer-controlled bytes: batches the writer made come back
 * as the same messages, and random and mutated frames (over 10^5 in all) get the verdict of an
 * independent reference reading, never a read outside the frame (each frame's memory ends where
 * the frame does, so such a read would throw).
 */
class BatchDecoderFuzzTest {
  private static final int CHUNK = 4096;
  private final RdmaContext context = new InMemoryProvider().open("mem0");
  private final ProtectionDomain pd = context.allocateProtectionDomain();
  private final RegisteredBuffers buffers = RegisteredBuffers.register(pd, 1, 1, CHUNK);
  private final BatchWriter writer = new BatchWriter(buffers, new SendCopier(null, buffers, new ConnectionCounters(1), 1));
  private final BatchDecoder decoder = new BatchDecoder();
  private final Random random = new Random(20);

  @AfterEach
  void close() {
    buffers.deregister();
    buffers.free();
    pd.close();
    context.close();
  }

  @Test
  void batchesTheWriterMakesDecodeToTheSameMessages() {
    for (int i = 0; i < 20_000; i++) {
      List<byte[]> messages = new ArrayList<>();
      byte[] frame = write(messages, 1 + random.nextInt(40), 1 + random.nextInt(300));
      if (messages.size() == 1) {
        assertThat(frame).as("a lone message goes as itself").isEqualTo(messages.get(0));
        continue;
      }
      assertThat(decode(frame, Integer.MAX_VALUE)).as("batch %d", i).containsExactlyElementsOf(messages);
    }
  }

  @Test
  void randomFramesGetTheReferenceVerdictAndNoReadOutsideThem() {
    int valid = 0;
    for (int i = 0; i < 50_000; i++) {
      // Mostly plausible structure (small counts and lengths, bodies as long as their lengths
      // say), each part wrong now and then, so that every check and the walk are reached.
      ByteBuffer b = ByteBuffer.allocate(512);
      int count = random.nextInt(5) == 0 ? random.nextInt() : random.nextInt(8) - 1;
      b.putInt(count);
      int messages = random.nextInt(4) == 0 ? random.nextInt(10) : Math.max(0, count);
      for (int m = 0; m < messages && b.remaining() >= 4; m++) {
        int n = random.nextInt(8) == 0 ? random.nextInt() : random.nextInt(26) - 2;
        b.putInt(n);
        int body = random.nextInt(8) == 0 ? random.nextInt(26) : Math.max(0, n);
        if (body > b.remaining()) {
          break;
        }
        byte[] bytes = new byte[body];
        random.nextBytes(bytes);
        b.put(bytes);
      }
      int length = random.nextInt(4) == 0 ? random.nextInt(b.position() + 8) : b.position();
      valid += checkAgainstReference(Arrays.copyOf(b.array(), length), random.nextBoolean() ? Integer.MAX_VALUE : 1 + random.nextInt(20));
    }
    System.out.println("random frames: " + valid + " of 50000 well formed");
    assertThat(valid).as("some random frames are well formed, so the walk is exercised").isPositive();
  }

  @Test
  void mutatedBatchesGetTheReferenceVerdictAndNoReadOutsideThem() {
    int valid = 0;
    for (int i = 0; i < 50_000; i++) {
      byte[] frame = write(new ArrayList<>(), 2 + random.nextInt(10), 1 + random.nextInt(40));
      switch (random.nextInt(4)) {
        case 0 -> frame = Arrays.copyOf(frame, random.nextInt(frame.length + 1)); // truncated
        case 1 -> frame = Arrays.copyOf(frame, frame.length + 1 + random.nextInt(8)); // trailing bytes
        default -> {
          for (int n = 1 + random.nextInt(3); n > 0 && frame.length > 0; n--) {
            frame[random.nextInt(frame.length)] = (byte) random.nextInt(256);
          }
        }
      }
      valid += checkAgainstReference(frame, random.nextBoolean() ? Integer.MAX_VALUE : 1 + random.nextInt(40));
    }
    System.out.println("mutated frames: " + valid + " of 50000 still well formed");
  }

  /** Fills a batch with up to {@code count} messages of up to {@code maxLength} bytes; the SEND's bytes, as posted. */
  private byte[] write(List<byte[]> messages, int count, int maxLength) {
    writer.open(buffers.takeSend());
    for (int i = 0; i < count; i++) {
      byte[] m = new byte[1 + random.nextInt(maxLength)];
      random.nextBytes(m);
      if (!writer.fits(m.length, CHUNK)) {
        break;
      }
      writer.append(m, m.length);
      messages.add(m);
    }
    int index = writer.index();
    long at = buffers.sendOffset(index) + writer.sendOffset();
    int length = writer.sendLength();
    assertThat(writer.close()).isEqualTo(messages.size() > 1);
    buffers.freeSend(index);
    byte[] frame = new byte[length];
    MemorySegment.copy(buffers.sendMemory(index), ValueLayout.JAVA_BYTE, at, frame, 0, length);
    return frame;
  }

  /** The decoder's verdict on {@code frame} matches the reference's, and a well-formed one walks to the same messages; 1 if well formed. */
  private int checkAgainstReference(byte[] frame, int maxMessage) {
    List<byte[]> expected = reference(frame, maxMessage);
    String violation = check(frame, maxMessage);
    if (expected == null) {
      assertThat(violation).as("verdict on %s", Arrays.toString(frame)).isNotNull().startsWith("it sent ");
      return 0;
    }
    assertThat(violation).as("verdict on %s", Arrays.toString(frame)).isNull();
    assertThat(decode(frame, maxMessage)).containsExactlyElementsOf(expected);
    return 1;
  }

  /**
   * Checks {@code frame} placed at a random offset in memory that ends where it ends: any read
   * past its last byte throws IndexOutOfBoundsException and fails the test.
   */
  private @Nullable String check(byte[] frame, int maxMessage) {
    int offset = random.nextInt(16);
    MemorySegment memory = MemorySegment.ofArray(new byte[offset + frame.length]);
    MemorySegment.copy(frame, 0, memory, ValueLayout.JAVA_BYTE, offset, frame.length);
    return BatchDecoder.check(memory, offset, frame.length, maxMessage);
  }

  private List<byte[]> decode(byte[] frame, int maxMessage) {
    MemorySegment memory = MemorySegment.ofArray(frame);
    assertThat(BatchDecoder.check(memory, 0, frame.length, maxMessage)).isNull();
    List<byte[]> out = new ArrayList<>();
    decoder.start(memory, 0);
    while (decoder.next()) {
      out.add(memory.asSlice(decoder.messageStart(), decoder.messageLength()).toArray(ValueLayout.JAVA_BYTE));
    }
    return out;
  }

  /** An independent reading of the format: the messages, or null when the frame is malformed. */
  private static @Nullable List<byte[]> reference(byte[] frame, int maxMessage) {
    if (frame.length < 4) {
      return null;
    }
    ByteBuffer b = ByteBuffer.wrap(frame);
    long count = b.getInt();
    if (count < 1) {
      return null;
    }
    List<byte[]> out = new ArrayList<>();
    for (long i = 0; i < count; i++) {
      if (b.remaining() < 4) {
        return null;
      }
      long n = b.getInt();
      if (n < 1 || n > b.remaining() || n > maxMessage) {
        return null;
      }
      byte[] m = new byte[(int) n];
      b.get(m);
      out.add(m);
    }
    return b.hasRemaining() ? null : out;
  }
}
