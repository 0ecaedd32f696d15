#!/bin/sh
# Session 28, second within-JVM A/B boot: lone (NativeQueuePair.LONE) again, spin and event; crit (InlineVerbs.CRITICAL,
# B: post_send as a critical call on rxe, against issue 20 item 5's ordinary downcall).
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/ping24
ulimit -l unlimited
ab() { # tag mode class field
  timeout 400 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 -Dab.class=$3 -Dab.field=$4 \
    -cp $P/o-ab:$(cat $P/cp-ab.txt) PongAB native 10.0.0.1 $2 12 10000 > $O/ab-$1.log 2>&1
  echo "$1 $2 $4 $(grep RESULT $O/ab-$1.log) | $(grep -h '^trial .* p50' $O/ab-$1.log | awk '{print $3 $6}' | tr '\n' ' ')" >> $O/info.txt
}
L="io.rdmareactive.rdma.rdmacore.NativeQueuePair LONE"
C="io.rdmareactive.rdma.rdmacore.InlineVerbs CRITICAL"
ab lone-spin-4 spin $L; ab crit-spin-1 spin $C; ab lone-event-1 event $L
ab lone-spin-5 spin $L; ab crit-spin-2 spin $C; ab lone-event-2 event $L
ab lone-spin-6 spin $L; ab crit-spin-3 spin $C
cat $O/info.txt
