#!/bin/bash
# Highest loopback UDP rate with 1448-byte datagrams at < 0.1% loss, wireperf vs iperf3 3.12.
# Each tool runs against itself (server and client of the same tool), 3 s per run, rates tried
# from low to high, alternating tools at each rate.
W=${W:-target/release/wireperf}
I=/usr/bin/iperf3
PORT=${PORT:-5990}
run() { # tool rate -> "lost_percent sent_bps"
  local bin=$1 rate=$2
  $bin -s -1 -p $PORT >/dev/null 2>&1 &
  local spid=$!
  sleep 0.4
  local out
  out=$($bin -c 127.0.0.1 -p $PORT -u -l 1448 -b $rate -t 3 -J 2>/dev/null)
  wait $spid 2>/dev/null
  python3 -c '
import json,sys
d=json.loads(sys.stdin.read()); e=d["end"]
r=e.get("sum_received",{}); s=e.get("sum_sent",{})
print("%.4f %.0f %.0f %d %d" % (r.get("lost_percent",-1), s.get("bits_per_second",0), r.get("bits_per_second",0), r.get("lost_packets",0), s.get("packets",0)))' <<< "$out"
}
for rate in "$@"; do
  for tool in W I; do
    bin=${!tool}
    res=$(run $bin $rate)
    echo "$tool $rate $res"
  done
done
