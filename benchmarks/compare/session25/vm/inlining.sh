#!/bin/sh
# old (19b94f5) vs new (main) Pong1 native spin, default inlining vs generous inlining; C2-only guest JVM
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/ping24
pong() { # rev tag pass flags...
  r=$1; t=$2; p=$3; shift 3
  timeout 400 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 "$@" -cp $P/o-$r:$(cat $P/cp-$r.txt) \
    Pong1 native 10.0.0.1 spin 5 10000 > $O/pong-$r-$t-$p.log 2>&1
  echo "pong $r $t $p $(grep RESULT $O/pong-$r-$t-$p.log) $(grep -h 'trial . p50' $O/pong-$r-$t-$p.log | awk '{print $5}' | tr '\n' ' ') $(date +%T)" >> $O/info.txt
}
ib_send_lat -F -n 20000 -s 8 > $O/lat-server.log 2>&1 &
sleep 2; ib_send_lat -F -n 20000 -s 8 10.0.0.1 > $O/lat-client.log 2>&1; wait
echo "ib_send_lat $(grep -A1 't_typical' $O/lat-client.log | tail -1)" >> $O/info.txt
BIG="-XX:MaxInlineSize=120 -XX:FreqInlineSize=600 -XX:InlineSmallCode=8000"
for p in 1 2; do
  pong new def $p; pong old def $p; pong new big $p $BIG; pong old big $p $BIG
done
cat $O/info.txt
