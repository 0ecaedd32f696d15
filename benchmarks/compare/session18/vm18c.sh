#!/bin/sh
# Session 18, boot 3: place the step inside h20b (3576d35 .. def3630) and try main with the doorbell rung earlier.
J=$1/bin/java
O=$RDMA_VM_OUT
pong() { # rev tag label [jvm args]
  timeout 400 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 $4 -cp /work/ping/pb/c-$1:$(cat /work/ping/pb/cp-$1.txt) \
    Pong native 10.0.0.1 spin 5 10000 > $O/pong-$3-$2.log 2>&1
  echo "pong $3 $2 $(grep RESULT $O/pong-$3-$2.log) $(date +%T)" >> $O/info.txt
}
ib_send_lat -n 20000 -s 8 > $O/lat-server.log 2>&1 &
sleep 2; ib_send_lat -n 20000 -s 8 10.0.0.1 > $O/lat-client.log 2>&1; wait
echo "ib_send_lat $(grep -A1 't_typical' $O/lat-client.log | tail -1)" >> $O/info.txt
for r in 1 2 3; do
  pong 3576d35 $r 3576d35; pong c005d2a $r c005d2a; pong dc5f019 $r dc5f019; pong 86175cf $r 86175cf; pong def3630 $r def3630
  pong main $r main; pong v $r v-early -Dv.early=true; pong v $r v-both "-Dv.early=true -Dv.pumpEnd=true"
done
cat $O/info.txt
