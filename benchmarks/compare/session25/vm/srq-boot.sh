#!/bin/sh
# 0613d2f's Pong1 native in event mode (RdmaLoopResources.shared()), shared receive queue on vs off; C2-only guest JVM
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/ping24
pong() { # tag pass opts...
  t=$1; p=$2; shift 2
  timeout 400 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 -cp $P/o-cur:$(cat $P/cp-cur.txt) \
    Pong1 native 10.0.0.1 event 5 10000 "$@" > $O/pong-$t-$p.log 2>&1
  echo "pong $t $p $(grep RESULT $O/pong-$t-$p.log) $(grep -h 'trial . p50' $O/pong-$t-$p.log | awk '{print $5}' | tr '\n' ' ') $(date +%T)" >> $O/info.txt
}
ib_send_lat -F -n 20000 -s 8 > $O/lat-server.log 2>&1 &
sleep 2; ib_send_lat -F -n 20000 -s 8 10.0.0.1 > $O/lat-client.log 2>&1; wait
echo "ib_send_lat $(grep -A1 't_typical' $O/lat-client.log | tail -1)" >> $O/info.txt
for p in 1 2 3; do pong srq $p SRQ=true; pong own $p SRQ=false; done
cat $O/info.txt
