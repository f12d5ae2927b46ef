set -e
ip netns add sa; ip netns add sb
ip link add va type veth peer name vb
ip link set va netns sa; ip link set vb netns sb
ip -n sa addr add 10.88.0.1/24 dev va; ip -n sb addr add 10.88.0.2/24 dev vb
ip -n sa link set va up; ip -n sb link set vb up; ip -n sa link set lo up; ip -n sb link set lo up
ip netns exec sb iperf3 -s -D -1 -p 5201 >/dev/null; sleep 0.5
for r in 1 2 3; do
 for P in 1 2 4; do
  for L in 64K 1M; do
   ip netns exec sb iperf3 -s -D -1 -p 5201 >/dev/null 2>&1 || true; sleep 0.3
   bw=$(ip netns exec sa iperf3 -c 10.88.0.2 -p 5201 -t 3 -P $P -l $L -J | python3 -c 'import json,sys;d=json.load(sys.stdin);print(round(d["end"]["sum_received"]["bits_per_second"]/8e9,2))')
   echo "round $r P=$P len=$L GB/s=$bw"
  done
 done
done
