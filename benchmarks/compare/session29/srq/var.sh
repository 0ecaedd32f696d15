#!/bin/sh
# Session 29: one revision's variants, ABBA, one JVM each: VARS="name:rev:mode:extra-args ..." (extra args with ',' for ' ').
J=$1/bin/java
O=$RDMA_VM_OUT
P=/work/ping24
PASSES=${PASSES:-6}
ulimit -l unlimited
pong() { # name rev mode extra tag
  timeout 300 $J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -Dpong.minWarm=6 ${JOPTS:-} \
    -cp $P/o-$2:$(cat $P/cp-$2.txt) Pong1 native 10.0.0.1 $3 5 10000 $(echo $4 | tr ',' ' ') > $O/pong-$5.log 2>&1
  echo "pong $1 $3 $5 $(grep RESULT $O/pong-$5.log | awk '{print $(NF-1)}') p50s: $(grep -h '^trial . p50' $O/pong-$5.log | awk '{print $5}' | tr '\n' ' ')" >> $O/info.txt
}
for p in $(seq 1 $PASSES); do
  date +"pass $p %T" >> $O/info.txt
  order=$VARS; [ $((p % 2)) = 0 ] && order=$(echo $VARS | awk '{for(i=NF;i>0;i--) printf "%s ", $i}')
  for v in $order; do
    n=$(echo $v | cut -d: -f1); r=$(echo $v | cut -d: -f2); m=$(echo $v | cut -d: -f3); x=$(echo $v | cut -d: -f4)
    pong $n $r $m "$x" $n-$m-$p
  done
done
cat $O/info.txt
