#!/bin/sh
# prof.sh JAVA_HOME: Pong1 native event mode under async-profiler (itimer), old (19b94f5) and s34, ABAB.
J=$1/bin/java O=$RDMA_VM_OUT P=/work/s30/p
ulimit -l unlimited
for pass in 1 2; do
for n in old s34; do
  timeout 400 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 \
    -agentpath:/work/s31/ap/linux-x64/libasyncProfiler.so=start,event=itimer,interval=1ms,threads,file=$O/prof-$n-$pass.txt,collapsed \
    -cp $P/o-$n:$(cat $P/cp-$n.txt) Pong1 native 10.0.0.1 event 5 10000 > $O/pong-$n-$pass.log 2>&1
  echo "$n $pass $(grep RESULT $O/pong-$n-$pass.log) $(grep -h 'cpu per round trip' $O/pong-$n-$pass.log | tail -5 | awk '{print $7}' | tr '\n' ' ')" >> $O/info.txt
done; done
cat $O/info.txt
