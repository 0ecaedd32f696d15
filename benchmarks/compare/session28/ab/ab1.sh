#!/bin/sh
# Session 28: within-JVM A/B (PongAB): trials alternate a static flag ABBA, so the JVM's latency mode cancels out.
# reply: ConnectionOperations.REPLY_FIRST (B: a pass with one arrival posts its reply before reposting receives)
# lone: NativeQueuePair.LONE (B: a list of one is posted alone; A: as a chained list)
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/ping24
ulimit -l unlimited
ab() { # tag mode class field
  timeout 400 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 -Dab.class=$3 -Dab.field=$4 \
    -cp $P/o-ab:$(cat $P/cp-ab.txt) PongAB native 10.0.0.1 $2 12 10000 > $O/ab-$1.log 2>&1
  echo "$1 $2 $4 $(grep RESULT $O/ab-$1.log) | $(grep -h '^trial .* p50' $O/ab-$1.log | awk '{print $3 $6}' | tr '\n' ' ')" >> $O/info.txt
}
R="io.rdmareactive.rdma.transport.ConnectionOperations REPLY_FIRST"
L="io.rdmareactive.rdma.rdmacore.NativeQueuePair LONE"
ab reply-spin-1 spin $R; ab lone-spin-1 spin $L; ab reply-event-1 event $R
ab reply-spin-2 spin $R; ab lone-spin-2 spin $L; ab reply-event-2 event $R
ab reply-spin-3 spin $R; ab lone-spin-3 spin $L; ab reply-spin-4 spin $R
cat $O/info.txt
