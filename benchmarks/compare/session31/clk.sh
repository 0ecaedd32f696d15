#!/bin/sh
J=$1/bin/java; O=$RDMA_VM_OUT; P=/work/s30/p
ulimit -l unlimited
{ cat /sys/devices/system/clocksource/clocksource0/current_clocksource; cat /sys/devices/system/clocksource/clocksource0/available_clocksource; cat /proc/cmdline; } > $O/info.txt
t0=$(date +%s.%N); sleep 5; t1=$(date +%s.%N); echo "sleep 5 took $(echo "$t1 - $t0" | bc) s by the guest clock" >> $O/info.txt
$J -cp /work/s31/clk Clk >> $O/info.txt 2>&1
lat() {
  ib_send_lat -d rxe0 -x 1 -F -n 20000 -s 8 -p $1 > $O/lat-server-$1.log 2>&1 &
  sleep 2; ib_send_lat -d rxe0 -x 1 -F -n 20000 -s 8 -p $1 10.0.0.1 > $O/lat-client-$1.log 2>&1; wait
  echo "ib_send_lat $(grep -E '^ *8 ' $O/lat-client-$1.log)" >> $O/info.txt
}
pong() { # rev mode tag
  timeout 300 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 \
    -cp $P/o-$1:$(cat $P/cp-$1.txt) Pong1 native 10.0.0.1 $2 5 10000 > $O/pong-$3.log 2>&1
  echo "pong $1 $2 $3 $(grep RESULT $O/pong-$3.log | awk '{print $(NF-1)}') p50s: $(grep -h '^trial . p50' $O/pong-$3.log | awk '{print $5}' | tr '\n' ' ')" >> $O/info.txt
}
lat 18901
for p in 1 2 3; do for m in spin event; do pong head $m $m-$p; done; done
lat 18902
cat $O/info.txt
