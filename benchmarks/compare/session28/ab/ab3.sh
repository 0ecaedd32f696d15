#!/bin/sh
# Session 28, third within-JVM A/B boot: CHAIN_MEM (B: the lone post written into the chain's first flyweight; A: into the QP's own).
# Whether the list path's extra cost is its code or its memory.
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/ping24
ulimit -l unlimited
ab() { # tag mode class field
  timeout 400 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 -Dab.class=$3 -Dab.field=$4 \
    -cp $P/o-ab2:$(cat $P/cp-ab2.txt) PongAB native 10.0.0.1 $2 12 10000 > $O/ab-$1.log 2>&1
  echo "$1 $2 $4 $(grep RESULT $O/ab-$1.log) | $(grep -h '^trial .* p50' $O/ab-$1.log | awk '{print $3 $6}' | tr '\n' ' ')" >> $O/info.txt
}
M="io.rdmareactive.rdma.rdmacore.NativeQueuePair CHAIN_MEM"
ab chainmem-spin-1 spin $M; ab chainmem-spin-2 spin $M; ab chainmem-spin-3 spin $M; ab chainmem-event-1 event $M
cat $O/info.txt
