#!/bin/sh
# Session 27: isolated 8 B request-response, 19b94f5 (old) against HEAD's code (s26 = 87421fe), Pong1
# native, spin (thread-per-connection busy loops) and event (shared loops), ABBA order, many JVMs:
# each JVM settles in a mode, so only many runs average them out.
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/ping24
REVS=${REVS:-old s26}
PASSES=${PASSES:-6}
MODES=${MODES:-spin event}
ulimit -l unlimited
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
for p in $(seq 1 $PASSES); do
  date +"pass $p %T" >> $O/info.txt
  order=$REVS; [ $((p % 2)) = 0 ] && order=$(echo $REVS | awk '{for(i=NF;i>0;i--) printf "%s ", $i}')
  for m in $MODES; do for r in $order; do pong $r $m $r-$m-$p; done; done
  [ $((p % 3)) = 0 ] && lat $((18901 + p))
done
cat $O/info.txt
