#!/bin/sh
# ib_send_lat, the verbs-only Java ping-pong, and the transport's (Pong, spin), alternating, one boot.
J=$1/bin/java
O=$RDMA_VM_OUT
port=18900
lat() { port=$((port+1))
  ib_send_lat -d rxe0 -x 1 -s 8 -n 50000 -p $port -F > $O/lat-srv-$1.txt 2>&1 &
  sleep 2
  ib_send_lat -d rxe0 -x 1 -s 8 -n 50000 -p $port -F 10.0.0.1 > $O/lat-cli-$1.txt 2>&1
  wait
  echo "lat $1: $(grep -E '^ *8 ' $O/lat-cli-$1.txt)" >> $O/info.txt
}
verbs() {
  timeout 300 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -cp /work/ping/vp/c:$(cat /work/ping/pb/cp-main.txt) VerbsPong rxe0 1 20000 5 > $O/verbs-$1.log 2>&1
  echo "verbs $1 $(grep RESULT $O/verbs-$1.log) $(grep -i exception $O/verbs-$1.log | head -1)" >> $O/info.txt
}
pong() {
  timeout 400 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 -cp /work/ping/pb/c-main:$(cat /work/ping/pb/cp-main.txt) \
    Pong native 10.0.0.1 spin 5 10000 > $O/pong-$1.log 2>&1
  echo "pong $1 $(grep RESULT $O/pong-$1.log)" >> $O/info.txt
}
for r in 1 2; do lat $r; verbs $r; pong $r; done
cat $O/info.txt
