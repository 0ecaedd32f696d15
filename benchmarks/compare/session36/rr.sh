#!/bin/sh
# Session 36: the isolated 8 B request-response (Pong1, native provider, both ends in one JVM),
# in spin (a busy thread per connection) and event mode (the shared loops), one JVM per revision,
# mode and pass, the revisions' order reversed every other pass: each JVM settles in a latency mode,
# so only many JVMs compare revisions. P holds each revision's Pong1 build (o-REV, cp-REV.txt) made
# by session 30's mk.sh; h36 is main at 638df7e. Boot 1 ran this without -XX:ErrorFile.
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/s36/p
REVS=${REVS:-00e2fba c51e390 19b94f5 h36}
PASSES=${PASSES:-6}
MODES=${MODES:-spin event}
ulimit -l unlimited
lat() {
  ib_send_lat -d rxe0 -x 1 -F -n 20000 -s 8 -p $1 > $O/lat-server-$1.log 2>&1 &
  sleep 2; ib_send_lat -d rxe0 -x 1 -F -n 20000 -s 8 -p $1 10.0.0.1 > $O/lat-client-$1.log 2>&1; wait
  echo "ib_send_lat $(grep -E '^ *8 ' $O/lat-client-$1.log)" >> $O/info.txt
}
pong() { # rev mode tag
  timeout 300 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 -XX:ErrorFile=$O/hs_err_$3_%p.log \
    -cp $P/o-$1:$(cat $P/cp-$1.txt) Pong1 native 10.0.0.1 $2 5 10000 > $O/pong-$3.log 2>&1
  echo "pong $1 $2 $3 $(grep RESULT $O/pong-$3.log | awk '{print $(NF-1)}') p50s: $(grep -h '^trial . p50' $O/pong-$3.log | awk '{print $5}' | tr '\n' ' ')" >> $O/info.txt
}
lat 18901
for p in $(seq 1 $PASSES); do
  date +"pass $p %T" >> $O/info.txt
  order=$REVS; [ $((p % 2)) = 0 ] && order=$(echo $REVS | awk '{for(i=NF;i>0;i--) printf "%s ", $i}')
  for m in $MODES; do for r in $order; do pong $r $m $r-$m-$p; done; done
  [ $((p % 3)) = 0 ] && lat $((18901 + p))
done
cat $O/info.txt
