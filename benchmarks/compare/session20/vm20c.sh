#!/bin/sh
# Session 20, boot 3: what a slow-mode run is. Pong with a one-way histogram of its last trial (2 us buckets),
# every poll thread's CPU and involuntary context switches sampled every 3 s, and runs with the two poll
# threads pinned one per vCPU (taskset on their thread ids once they exist) beside unpinned ones.
J=$1/bin/java
O=$RDMA_VM_OUT
threads() { # pid -> "name cpu nonvoluntary" per rdma thread
  for t in /proc/$1/task/*; do
    n=$(cat $t/comm 2>/dev/null)
    case "$n" in rdma-poll*) echo "$n cpu=$(awk '{print $39}' $t/stat) nvcsw=$(awk '/nonvoluntary/ {print $2}' $t/status) tid=${t##*/}";; esac
  done
}
pong() { # rev pass pin(0|1)
  L=$O/pong-$1$( [ $3 = 1 ] && echo -pinned)-$2.log
  timeout 400 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 -cp /work/ping/pb/h-$1:$(cat /work/ping/pb/cp-$1.txt) \
    Pong native 10.0.0.1 spin 5 10000 > $L 2>&1 &
  pid=$!  # as run: the pid of timeout, not of the JVM, so no thread was found or pinned (see the notes)
  pinned=0
  while kill -0 $pid 2>/dev/null; do
    sleep 3
    if [ $3 = 1 ] && [ $pinned = 0 ]; then
      c=0
      for tid in $(threads $pid | sed 's/.*tid=//'); do taskset -p -c $c $tid > /dev/null 2>&1; c=$((1 - c)); done
      [ -n "$(threads $pid)" ] && pinned=1
    fi
    threads $pid | sed "s/^/T $(date +%T) /" >> $L.threads
  done
  echo "pong $1 pin=$3 $2 $(grep RESULT $L) $(grep HIST $L | cut -c1-300) $(date +%T)" >> $O/info.txt
}
ib_send_lat -F -n 20000 -s 8 > $O/lat-server.log 2>&1 &
sleep 2; ib_send_lat -F -n 20000 -s 8 10.0.0.1 > $O/lat-client.log 2>&1; wait
echo "ib_send_lat $(grep -A1 't_typical' $O/lat-client.log | tail -1)" >> $O/info.txt
for r in 1 2 3; do
  pong b2931f4 $r 0; pong b2931f4 $r 1; pong p3 $r 0; pong p3 $r 1
done
cat $O/info.txt
