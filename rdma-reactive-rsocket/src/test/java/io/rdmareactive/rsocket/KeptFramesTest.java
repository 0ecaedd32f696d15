package io.rdmareactive.rsocket;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.rdmareactive.rdma.inmemory.InMemoryProvider;
import io.rdmareactive.rdma.transport.DisposableRdmaServer;
import io.rdmareactive.rdma.transport.RdmaClient;
import io.rdmareactive.rdma.transport.RdmaConnection;
import io.rdmareactive.rdma.transport.RdmaMessage;
import io.rdmareactive.rdma.transport.RdmaOption;
import io.rdmareactive.rdma.transport.RdmaServer;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Received frames kept past their connection's close and then written to a Netty channel (issue
 * 24, finding 2): a proxy forwarding a kept zero-copy frame after its peer left. Netty's native
 * transport gathers direct buffers by address into writev, past every check the JDK makes; each
 * write must carry the frame's original bytes, never freed memory or another connection's
 * message. Runs on epoll (skipped, saying why, where the native library does not load) and NIO.
 */
class KeptFramesTest {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final int SIZE = 1000;

  private static byte[] bytes(long seed) {
    byte[] b = new byte[SIZE];
    new Random(seed).nextBytes(b);
    return b;
  }

  @Test
  void framesKeptPastTheCloseAndWrittenThroughEpollCarryTheirOriginalBytes() throws Exception {
    Assumptions.assumeTrue(Epoll.isAvailable(), () -> "epoll unavailable here: " + Epoll.unavailabilityCause());
    writeKeptFrames(EpollIoHandler.newFactory(), EpollServerSocketChannel.class, EpollSocketChannel.class);
  }

  @Test
  void framesKeptPastTheCloseAndWrittenThroughNioCarryTheirOriginalBytes() throws Exception {
    writeKeptFrames(NioIoHandler.newFactory(), NioServerSocketChannel.class, NioSocketChannel.class);
  }

  private void writeKeptFrames(IoHandlerFactory io, Class<? extends ServerSocketChannel> serverType,
      Class<? extends SocketChannel> clientType) throws Exception {
    BlockingQueue<RdmaMessage> kept = new LinkedBlockingQueue<>();
    BlockingQueue<RdmaConnection> accepted = new LinkedBlockingQueue<>();
    DisposableRdmaServer rdma = RdmaServer.create().host("127.0.0.1").port(0)
        .option(RdmaOption.PROVIDER, InMemoryProvider.NAME)
        .handle((in, out) -> {
          accepted.add((RdmaConnection) in);
          return in.receive().doOnNext(kept::add).then(Mono.never());
        })
        .bindNow();
    MultiThreadIoEventLoopGroup group = new MultiThreadIoEventLoopGroup(1, io);
    try {
      byte[] original = bytes(1);
      RdmaConnection first = connect(rdma);
      first.outbound().send(Mono.just(original)).block(WAIT);
      RdmaMessage m = kept.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
      assertThat(m).isNotNull();
      ByteBuf frame = new SegmentByteBuf(ByteBufAllocator.DEFAULT, m);
      ByteBuffer nio = frame.nioBuffer(); // taken while open, written after the close
      ByteBuffer asBuffer = m.asByteBuffer();
      first.dispose();
      accepted.take().onDispose().block(WAIT);
      // Other connections' messages, into whatever memory the closed one's allocator gave back.
      for (int i = 0; i < 8; i++) {
        RdmaConnection other = connect(rdma);
        other.outbound().send(Flux.range(0, 64).map(j -> bytes(100 + j))).block(WAIT);
        other.dispose();
      }
      for (int i = 0; i < 8 * 64; i++) {
        kept.poll(WAIT.toSeconds(), TimeUnit.SECONDS).release();
      }

      assertThat(sink(group, serverType, clientType, frame.retain())).as("the frame itself").isEqualTo(original);
      assertThat(sink(group, serverType, clientType, Unpooled.wrappedBuffer(nio))).as("its nioBuffer()")
          .isEqualTo(original);
      assertThat(sink(group, serverType, clientType, Unpooled.wrappedBuffer(asBuffer)))
          .as("the message's asByteBuffer()").isEqualTo(original);
      frame.release();
      assertThatThrownBy(() -> frame.getByte(0)).isInstanceOf(IllegalStateException.class);
      assertThatThrownBy(frame::nioBuffer).isInstanceOf(IllegalStateException.class);
    } finally {
      group.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
      rdma.disposeNow(WAIT);
    }
  }

  private static RdmaConnection connect(DisposableRdmaServer server) {
    return RdmaClient.create().host("127.0.0.1").port(server.port()).option(RdmaOption.PROVIDER, InMemoryProvider.NAME)
        .connectNow();
  }

  /** Writes {@code data} from one socket to another of the given transport; what arrived. */
  private static byte[] sink(MultiThreadIoEventLoopGroup group, Class<? extends ServerSocketChannel> serverType,
      Class<? extends SocketChannel> clientType, ByteBuf data) throws Exception {
    int expected = data.readableBytes();
    ByteArrayOutputStream got = new ByteArrayOutputStream();
    BlockingQueue<Boolean> done = new LinkedBlockingQueue<>();
    Channel server = new ServerBootstrap().group(group).channel(serverType)
        .childHandler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel ch) {
            ch.pipeline().addLast(new SimpleChannelInboundHandler<ByteBuf>() {
              @Override
              protected void channelRead0(ChannelHandlerContext ctx, ByteBuf msg) {
                byte[] b = new byte[msg.readableBytes()];
                msg.readBytes(b);
                got.writeBytes(b);
                if (got.size() >= expected) {
                  done.add(true);
                }
              }
            });
          }
        })
        .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
    try {
      Channel client = new Bootstrap().group(group).channel(clientType)
          .handler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {}
          })
          .connect(server.localAddress()).sync().channel();
      try {
        client.writeAndFlush(data).sync();
        assertThat(done.poll(WAIT.toSeconds(), TimeUnit.SECONDS)).as("all %d bytes arrived", expected).isNotNull();
        return got.toByteArray();
      } finally {
        client.close().sync();
      }
    } finally {
      server.close().sync();
    }
  }
}
