#!/bin/sh
# Session 20, boot 2: main (b2931f4), p3 (rebuilt after the review fix of SendDoorbell.queue) and, for the floor, 19b94f5 and 22ef9d6; 4 passes.
J=$1/bin/java
O=$RDMA_VM_OUT
pong() { # rev pass
  timeout 400 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 -cp /work/ping/pb/c3-$1:$(cat /work/ping/pb/cp-$1.txt) \
    Pong native 10.0.0.1 spin 5 10000 > $O/pong-$1-$2.log 2>&1
  echo "pong $1 $2 $(grep RESULT $O/pong-$1-$2.log) $(date +%T)" >> $O/info.txt
}
ib_send_lat -n 20000 -s 8 > $O/lat-server.log 2>&1 &
sleep 2; ib_send_lat -n 20000 -s 8 10.0.0.1 > $O/lat-client.log 2>&1; wait
echo "ib_send_lat $(grep -A1 't_typical' $O/lat-client.log | tail -1)" >> $O/info.txt
for r in 1 2 3 4; do
  pong b2931f4 $r; pong p3 $r; pong 19b94f5 $r; pong 22ef9d6 $r
done
cat $O/info.txt
