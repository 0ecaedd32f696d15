#!/bin/sh
# Session 18, boot 2: place the c51e390 -> f9cd99b step (issue 20's merges), same Pong harness, spin, 3 passes.
J=$1/bin/java
O=$RDMA_VM_OUT
pong() { # rev tag [extra jvm args] [extra cp]
  timeout 400 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 $3 -cp $4/work/ping/pb/c-$1:$(cat /work/ping/pb/cp-$1.txt) \
    Pong native 10.0.0.1 spin 5 10000 > $O/pong-$1$5-$2.log 2>&1
  echo "pong $1$5 $2 $(grep RESULT $O/pong-$1$5-$2.log) $(date +%T)" >> $O/info.txt
}
ib_send_lat -n 20000 -s 8 > $O/lat-server.log 2>&1 &
sleep 2; ib_send_lat -n 20000 -s 8 10.0.0.1 > $O/lat-client.log 2>&1; wait
echo "ib_send_lat $(grep -A1 't_typical' $O/lat-client.log | tail -1)" >> $O/info.txt
for r in 1 2 3; do
  pong c51e390 $r; pong 19b94f5 $r; pong 2a997c4 $r; pong 3576d35 $r; pong def3630 $r; pong 22ef9d6 $r; pong f9cd99b $r
  pong main $r "-Dpong.critical=true" "/work/ping/pb/c-main-crit:" "-crit"; pong main $r
done
cat $O/info.txt
