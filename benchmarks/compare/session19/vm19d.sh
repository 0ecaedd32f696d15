#!/bin/sh
# Session 19, boot 4: where within issue 20's doorbell half (h20b) does the floor step? 19b94f5 (base), 2a997c4 (post lists), 3576d35 (SendDoorbell),
# c005d2a (ReceiveDoorbell), dc5f019 (ListPost), 86175cf (inline sends end to end); 2 passes.
# (As run: dc5f019 and 86175cf had no c3- class directory, so their runs failed to start.)
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
for r in 1 2; do
  pong 19b94f5 $r; pong 2a997c4 $r; pong 3576d35 $r; pong c005d2a $r; pong dc5f019 $r; pong 86175cf $r
done
cat $O/info.txt
