#!/bin/sh
# Session 20, boot 5: main (p3: 51a6251's library, as fd95c72), p5 (branch early: the doorbell rung before requesting more from an empty source) and 19b94f5; 4 passes.
J=$1/bin/java
O=$RDMA_VM_OUT
pong() { # rev pass
  timeout 400 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 -cp /work/ping/pb/c3-$1:$(cat /work/ping/pb/cp-$1.txt) \
    Pong native 10.0.0.1 spin 5 10000 > $O/pong-$1-$2.log 2>&1
  echo "pong $1 $2 $(grep RESULT $O/pong-$1-$2.log) $(date +%T)" >> $O/info.txt
}
ib_send_lat -F -n 20000 -s 8 > $O/lat-server.log 2>&1 &
sleep 2; ib_send_lat -F -n 20000 -s 8 10.0.0.1 > $O/lat-client.log 2>&1; wait
echo "ib_send_lat $(grep -A1 't_typical' $O/lat-client.log | tail -1)" >> $O/info.txt
for r in 1 2 3 4; do
  pong p3 $r; pong p5 $r; pong 19b94f5 $r
done
cat $O/info.txt
