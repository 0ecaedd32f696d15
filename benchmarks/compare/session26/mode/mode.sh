#!/bin/sh
# What sets a run's latency mode: Pong1 native spin at 87421fe, 6 JVMs x 5 trials; per run the trials'
# p50 and CPU per round trip, where each thread runs (psr, sampled 3 times), and late JIT activity.
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/ping24
ulimit -l unlimited
ib_send_lat -F -n 20000 -s 8 > $O/lat-server.log 2>&1 &
sleep 2; ib_send_lat -F -n 20000 -s 8 10.0.0.1 > $O/lat-client.log 2>&1; wait
echo "ib_send_lat $(grep -A1 't_typical' $O/lat-client.log | tail -1)" >> $O/info.txt
for i in 1 2 3 4 5 6; do
  $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 -XX:+PrintCompilation \
    -cp $P/o-s26:$(cat $P/cp-s26.txt) Pong1 native 10.0.0.1 spin 5 10000 > $O/pong-$i.log 2>&1 &
  pid=$!
  n=0
  while kill -0 $pid 2>/dev/null; do
    sleep 8; n=$((n+1))
    if grep -q "^trial 1 p50" $O/pong-$i.log 2>/dev/null && [ ! -f $O/psr-$i-done ]; then
      for s in 1 2 3; do
        for t in /proc/$pid/task/*; do printf "%s %s %s\n" "$(cat $t/comm)" "$(awk '{print $39}' $t/stat)" "$(awk '{print $14+$15}' $t/stat)"; done | grep -E "rdma|main" >> $O/psr-$i.txt
        echo "--" >> $O/psr-$i.txt; sleep 1
      done
      touch $O/psr-$i-done
    fi
  done
  wait $pid
  echo "run $i $(grep RESULT $O/pong-$i.log) p50s: $(grep -h '^trial . p50' $O/pong-$i.log | awk '{print $5}' | tr '\n' ' ') cpu/rt: $(grep -h '^trial . cpu' $O/pong-$i.log | awk '{print $7}' | tr '\n' ' ') compiles-after-trial0: $(awk '/^trial 0 p50/{f=1} f && /::|made not entrant/{c++} END{print c+0}' $O/pong-$i.log)" >> $O/info.txt
  grep "^thread" $O/pong-$i.log | tail -4 | sed "s/^/run $i /" >> $O/info.txt
done
cat $O/info.txt
