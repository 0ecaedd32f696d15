#!/bin/sh
# Session 19, boot 2: does the larger C2 inlining budget (boot 1: main 84.6 -> 72.6 us by the median trial) help main alone, or 00e2fba as much?
J=$1/bin/java
O=$RDMA_VM_OUT
INL="-XX:MaxInlineLevel=30 -XX:InlineSmallCode=6000 -XX:FreqInlineSize=650 -XX:MaxInlineSize=70"
pong() { # rev pass label prefix [extra jvm args]
  timeout 400 $4 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 $5 -cp /work/ping/pb/c3-$1:$(cat /work/ping/pb/cp-$1.txt) \
    Pong native 10.0.0.1 spin 5 10000 > $O/pong-$1$3-$2.log 2>&1
  echo "pong $1$3 $2 $(grep RESULT $O/pong-$1$3-$2.log) $(date +%T)" >> $O/info.txt
}
ib_send_lat -n 20000 -s 8 > $O/lat-server.log 2>&1 &
sleep 2; ib_send_lat -n 20000 -s 8 10.0.0.1 > $O/lat-client.log 2>&1; wait
echo "ib_send_lat $(grep -A1 't_typical' $O/lat-client.log | tail -1)" >> $O/info.txt
for r in 1 2 3; do
  pong main $r "" ""; pong main $r "-inl" "" "$INL"
  pong old $r "" ""; pong old $r "-inl" "" "$INL"
done
cat $O/info.txt
