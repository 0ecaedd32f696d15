#!/bin/sh
JH=$1; BASECP=$2
ulimit -l unlimited
M=/work/main/rdma-reactive-native
CP="$M/target/test-classes:$M/target/classes:$(cat $M/target/test-classpath.txt)"
CON=$(echo "$CP" | tr ':' '\n' | grep -m1 junit-platform-console-standalone)
echo "-- rdma resource before"; rdma resource show
RDMA_SHARED_RECEIVE_QUEUE=false "$JH/bin/java" --enable-native-access=ALL-UNNAMED -XX:+AllowRedefinitionToAddDeleteMethods -XX:+EnableDynamicAgentLoading \
    --sun-misc-unsafe-memory-access=allow -Xshare:off -Drdma.provider=native -XX:ErrorFile=$RDMA_VM_OUT/hs_err_%p.log -jar "$CON" execute --class-path "$CP" \
    --select-class io.rdmareactive.rdma.rdmacore.NativeTransportTest --include-tag native --details=summary --disable-banner > $RDMA_VM_OUT/srqoff.log 2>&1
echo "srq-off rc $?"
grep -E "tests (successful|failed|found|skipped)|MethodSource" $RDMA_VM_OUT/srqoff.log | head -20
echo "-- rdma resource after srq-off"; rdma resource show
sh benchmarks/compare/session21/vm21b-ba.sh "$JH" "$BASECP" 3
