#!/bin/sh
# Session 31: the guest clocksource, tsc against hpet, switched at run time in one boot (ABBA per pass).
J=$1/bin/java; O=$RDMA_VM_OUT; P=/work/s30/p; CS=/sys/devices/system/clocksource/clocksource0/current_clocksource
ulimit -l unlimited
cat /proc/cmdline > $O/info.txt
lat() {
  ib_send_lat -d rxe0 -x 1 -F -n 20000 -s 8 -p $1 > $O/lat-server-$1.log 2>&1 &
  sleep 2; ib_send_lat -d rxe0 -x 1 -F -n 20000 -s 8 -p $1 10.0.0.1 > $O/lat-client-$1.log 2>&1; wait
  echo "ib_send_lat $2 $(grep -E '^ *8 ' $O/lat-client-$1.log)" >> $O/info.txt
}
pong() { # clock mode tag
  timeout 300 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 \
    -cp $P/o-head:$(cat $P/cp-head.txt) Pong1 native 10.0.0.1 $2 5 10000 > $O/pong-$3.log 2>&1
  echo "pong $1 $2 $3 $(grep RESULT $O/pong-$3.log | awk '{print $(NF-1)}') p50s: $(grep -h '^trial . p50' $O/pong-$3.log | awk '{print $5}' | tr '\n' ' ')" >> $O/info.txt
}
port=18900
for p in 1 2 3 4; do
  order="tsc hpet"; [ $((p % 2)) = 0 ] && order="hpet tsc"
  for c in $order; do
    echo $c > $CS; echo "pass $p clock $(cat $CS) $($J -cp /work/s31/clk Clk | tail -1)" >> $O/info.txt
    for m in spin event; do pong $c $m $c-$m-$p; done
    port=$((port + 1)); lat $port $c
  done
done
cat $O/info.txt
