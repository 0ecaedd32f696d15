#!/bin/sh
# Session 27: does address-space randomization set the latency harness's mode?
# Alternates Pong1 native spin (HEAD code = 87421fe) and VerbsPingPong (the verbs-only floor),
# each with ASLR (as usual) and under `setarch -R` (no randomization), 4 passes; ib_send_lat around.
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/ping24
CP=$P/o-s26:$(cat $P/cp-s26.txt)
ulimit -l unlimited
echo "randomize_va_space $(cat /proc/sys/kernel/randomize_va_space)" >> $O/info.txt
lat() {
  ib_send_lat -d rxe0 -x 1 -F -n 20000 -s 8 -p $1 > $O/lat-server-$1.log 2>&1 &
  sleep 2; ib_send_lat -d rxe0 -x 1 -F -n 20000 -s 8 -p $1 10.0.0.1 > $O/lat-client-$1.log 2>&1; wait
  echo "ib_send_lat $(grep -E '^ *8 ' $O/lat-client-$1.log)" >> $O/info.txt
}
pong() { # tag wrap
  $2 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 \
    -cp $CP Pong1 native 10.0.0.1 spin 5 10000 > $O/pong-$1.log 2>&1
  echo "pong $1 $(grep RESULT $O/pong-$1.log) p50s: $(grep -h '^trial . p50' $O/pong-$1.log | awk '{print $5}' | tr '\n' ' ')" >> $O/info.txt
}
verbs() { # tag wrap
  $2 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -cp $CP \
    io.rdmareactive.benchmarks.VerbsPingPong --iterations 20000 > $O/verbs-$1.log 2>&1
  echo "verbs $1 $(grep p50_one_way_us $O/verbs-$1.log | awk "{print \$NF}" | tr "\n" " ")" >> $O/info.txt
}
lat 18901
for p in 1 2 3 4; do
  date +"pass $p %T" >> $O/info.txt
  pong $p-aslr ""
  pong $p-norand "setarch x86_64 -R"
  verbs $p-aslr ""
  verbs $p-norand "setarch x86_64 -R"
  [ $p = 2 ] && lat 18902
done
lat 18903
cat $O/info.txt
