#!/bin/sh
# Session 30: variants, ABBA, one JVM each: VARS="name:rev:mode:extra-args:preset ..." (',' for ' ' in extra-args; preset dni: the SRQ member's methods not inlined).
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/s30/p
PASSES=${PASSES:-6}
ulimit -l unlimited
lat() {
  ib_send_lat -d rxe0 -x 1 -F -n 20000 -s 8 -p $1 > $O/lat-server-$1.log 2>&1 &
  sleep 2; ib_send_lat -d rxe0 -x 1 -F -n 20000 -s 8 -p $1 10.0.0.1 > $O/lat-client-$1.log 2>&1; wait
  echo "ib_send_lat $(grep -E '^ *8 ' $O/lat-client-$1.log)" >> $O/info.txt
}
pong() { # name rev mode extra jopts tag
  jo=""; [ "$5" = dni ] && jo="-XX:CompileCommand=dontinline,*Member::give -XX:CompileCommand=dontinline,*Member::promise -XX:CompileCommand=dontinline,*Member::arrived"
  timeout 300 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 $jo \
    -cp $P/o-$2:$(cat $P/cp-$2.txt) Pong1 native 10.0.0.1 $3 5 10000 $(echo $4 | tr ',' ' ') > $O/pong-$6.log 2>&1
  echo "pong $1 $3 $6 $(grep RESULT $O/pong-$6.log | awk '{print $(NF-1)}') p50s: $(grep -h '^trial . p50' $O/pong-$6.log | awk '{print $5}' | tr '\n' ' ')" >> $O/info.txt
}
lat 18901
for p in $(seq 1 $PASSES); do
  date +"pass $p %T" >> $O/info.txt
  order=$VARS; [ $((p % 2)) = 0 ] && order=$(echo $VARS | awk '{for(i=NF;i>0;i--) printf "%s ", $i}')
  for v in $order; do
    n=$(echo $v | cut -d: -f1); r=$(echo $v | cut -d: -f2); m=$(echo $v | cut -d: -f3); x=$(echo $v | cut -d: -f4); jo=$(echo $v | cut -d: -f5)
    pong $n $r $m "$x" "$jo" $n-$m-$p
  done
  [ $((p % 3)) = 0 ] && lat $((18901 + p))
done
cat $O/info.txt
