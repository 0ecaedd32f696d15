#!/bin/sh
# Session 27: does thread placement set the latency mode? Pong1 native spin (s26), alternating
# unpinned runs (each poll thread's CPU sampled during the trials) and runs whose two poll threads
# are pinned one per vCPU (taskset -p) once warmed; ib_send_lat around.
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/ping24
R=${REV:-s26}
ulimit -l unlimited
lat() {
  ib_send_lat -d rxe0 -x 1 -F -n 20000 -s 8 -p $1 > $O/lat-server-$1.log 2>&1 &
  sleep 2; ib_send_lat -d rxe0 -x 1 -F -n 20000 -s 8 -p $1 10.0.0.1 > $O/lat-client-$1.log 2>&1; wait
  echo "ib_send_lat $(grep -E '^ *8 ' $O/lat-client-$1.log)" >> $O/info.txt
}
tids() { for t in /proc/$1/task/*; do c=$(cat $t/comm 2>/dev/null); case $c in rdma-poll*) echo "${t##*/}:$c";; esac; done; }
run() { # tag pin(yes|no)
  $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 \
    -cp $P/o-$R:$(cat $P/cp-$R.txt) Pong1 native 10.0.0.1 spin 8 10000 > $O/pong-$1.log 2>&1 &
  jp=$!
  while ! grep -q "^warmed" $O/pong-$1.log 2>/dev/null; do sleep 0.2; kill -0 $jp 2>/dev/null || break; done
  place=""
  if [ $2 = yes ]; then
    cpu=0; for x in $(tids $jp); do taskset -p -c $cpu ${x%%:*} > /dev/null; place="$place ${x#*:}->cpu$cpu"; cpu=$((1 - cpu)); done
  else
    for s in 1 2 3 4 5 6; do
      place="$place |"; for x in $(tids $jp); do place="$place ${x#*:}@$(awk '{print $39}' /proc/$jp/task/${x%%:*}/stat 2>/dev/null)"; done
      sleep 0.4
    done
  fi
  wait $jp
  echo "pong $1 $2 $(grep RESULT $O/pong-$1.log | awk '{print $(NF-1)}') p50s: $(grep -h '^trial . p50' $O/pong-$1.log | awk '{print $5}' | tr '\n' ' ') place:$place" >> $O/info.txt
}
lat 18901
for p in 1 2 3 4 5 6; do
  if [ $((p % 2)) = 1 ]; then run $p-free no; run $p-pin yes; else run $p-pin yes; run $p-free no; fi
  [ $p = 3 ] && lat 18902
done
lat 18903
cat $O/info.txt
