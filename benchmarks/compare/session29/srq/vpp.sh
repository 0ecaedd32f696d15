#!/bin/sh
# Session 29: does rxe itself charge for a shared receive queue? VerbsPingPong (the verbs-only floor) with each QP's
# receives on an SRQ of its own (--srq) or on the QP's own receive queue, ABBA, one JVM each.
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/ping24
ulimit -l unlimited
for p in $(seq 1 ${PASSES:-6}); do
  order="plain srq"; [ $((p % 2)) = 0 ] && order="srq plain"
  for v in $order; do
    a=""; [ $v = srq ] && a="--srq"
    timeout 200 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -cp $P/vpp/o:$(cat $P/cp-shp.txt) \
      VerbsPingPongSrq --iterations 20000 --trials 5 $a > $O/vpp-$v-$p.log 2>&1
    echo "pong $v spin $v-$p $(grep '^p50_one_way_us' $O/vpp-$v-$p.log | awk '{print $2}') p50s: $(grep '^trial' $O/vpp-$v-$p.log | awk '{print $3}' | tr '\n' ' ')" >> $O/info.txt
  done
done
cat $O/info.txt
