#!/usr/bin/env python3
"""wireperf vs an iperf3 build, alternating in one run. Called by bench/run (which builds).

Method (see docs/performance.md and BENCHMARKS.md):
- Every case runs in pairs: wireperf then the peer, or the peer then wireperf (the order
  alternates per pair so a slow drift does not favour one tool).
- Each run is a fresh one-shot server (`-s -1`) and a client with `-J`; both are children of
  this script, and their CPU time (user + system) comes from the kernel via wait4()'s rusage.
- Throughput is the receiver's `end.sum_received.bits_per_second` (TCP).
- Bytes per CPU-second = bytes received / (client CPU-s + server CPU-s).
- UDP: the highest `-b` with < 0.1 % loss, 1448-byte datagrams, found with the same search for
  both tools: one `-b 0` probe gives the ceiling, then a bisection in log space between
  100 Mbit/s and it (5 steps: about 1.1x precision for a 30x range).
- Ratios are wireperf / peer per pair; the table gives their median and [min-max].
"""

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

NS_TAG = os.environ.get("WPB_NS_TAG", f"wpb{os.getpid()}")
NS_S, NS_R = NS_TAG + "s", NS_TAG + "r"
VETH_S, VETH_R = NS_TAG + "a", NS_TAG + "b"
ADDR_S, ADDR_R = "10.204.0.1", "10.204.0.2"
LOSS_LIMIT = 0.1  # percent
UDP_LEN = 1448
UDP_FLOOR = 100e6  # bit/s: the search's lower end

CASES = {
    "tcp1": ("TCP 1 stream", []),
    # Like for like: iperf3 with wireperf's default bytes per call, to separate what the larger
    # calls give from what the receiver's low-water mark gives.
    "tcp1l1m": ("TCP 1 stream, both -l 1M", ["-l", "1M"]),
    "tcp4": ("TCP -P 4", ["-P", "4"]),
    "tcpR": ("TCP -R", ["-R"]),
    "tcpZ": ("TCP -Z", ["-Z"]),
    "udp": (f"UDP {UDP_LEN} B max rate, loss < {LOSS_LIMIT}%", None),
}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def wait_for_quiet(limit_s, threshold):
    """Polls the 1-minute load average until it is below `threshold` or `limit_s` passed."""
    t0 = time.time()
    while True:
        la = loadavg()
        if la < threshold:
            return la
        if time.time() - t0 >= limit_s:
            log(f"WARNING: load average still {la:.2f} (>= {threshold}) after {limit_s:.0f} s: results are noisy")
            return la
        log(f"load average {la:.2f} >= {threshold}: waiting (up to {limit_s - (time.time() - t0):.0f} s more)")
        time.sleep(20)


def sh(*args, check=True):
    return subprocess.run(list(args), check=check, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


class Veth:
    """Two namespaces joined by a veth pair; addresses exist only inside them. Always deleted."""

    def __enter__(self):
        self.__exit__()
        sh("ip", "netns", "add", NS_S)
        sh("ip", "netns", "add", NS_R)
        sh("ip", "link", "add", VETH_S, "netns", NS_S, "type", "veth", "peer", "name", VETH_R, "netns", NS_R)
        sh("ip", "-n", NS_S, "addr", "add", ADDR_S + "/30", "dev", VETH_S)
        sh("ip", "-n", NS_R, "addr", "add", ADDR_R + "/30", "dev", VETH_R)
        for ns, dev in ((NS_S, VETH_S), (NS_R, VETH_R)):
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            sh("ip", "-n", ns, "link", "set", dev, "up")
        return self

    def __exit__(self, *exc):
        for ns in (NS_S, NS_R):
            sh("ip", "netns", "del", ns, check=False)


class Env:
    def __init__(self, name):
        self.name = name

    def prefix(self, side):
        if self.name == "loopback":
            return []
        return ["ip", "netns", "exec", NS_S if side == "client" else NS_R]

    def server_addr(self):
        return "127.0.0.1" if self.name == "loopback" else ADDR_R

    def port(self):
        if self.name != "loopback":
            return 47411  # a fresh namespace has nothing else listening
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]

    def listening(self, port, udp=False):
        cmd = self.prefix("server") + ["ss", "-Hltn" if not udp else "-Hlun", f"sport = :{port}"]
        out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
        return bool(out.strip())


def wait_rusage(proc, timeout):
    """wait4() the child: exit status and its own CPU seconds (user + system)."""
    deadline = time.time() + timeout
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, ru.ru_utime + ru.ru_stime
        if time.time() >= deadline:
            proc.kill()
            pid, status, ru = os.wait4(proc.pid, 0)
            proc.returncode = -9
            return -9, ru.ru_utime + ru.ru_stime
        time.sleep(0.02)


def parse_json(text):
    """iperf3 3.21 may print warnings before the JSON document."""
    i = text.find("{")
    if i < 0:
        raise ValueError("no JSON in output")
    return json.loads(text[i:])


def one_run(tool, env, secs, extra, db):
    """One client+server run. Returns dict(bps, bytes, cpu, loss, doc) or None on failure."""
    port = env.port()
    is_wp = tool["kind"] == "wireperf"
    srv_cmd = env.prefix("server") + [tool["bin"], "-s", "-1", "-p", str(port)]
    cli_cmd = env.prefix("client") + [tool["bin"], "-c", env.server_addr(), "-p", str(port),
                                      "-t", str(secs), "-J"] + extra
    if is_wp:
        cli_cmd.append("--no-save")
    envv = dict(os.environ, WIREPERF_DB=db)
    with tempfile.TemporaryFile() as so, tempfile.TemporaryFile() as co:
        srv = subprocess.Popen(srv_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=envv)
        t0 = time.time()
        while not env.listening(port) and time.time() - t0 < 5:
            time.sleep(0.02)
        cli = subprocess.Popen(cli_cmd, stdout=co, stderr=subprocess.STDOUT, env=envv)
        rc, ccpu = wait_rusage(cli, secs + 30)
        src, scpu = wait_rusage(srv, 10)
        co.seek(0)
        text = co.read().decode(errors="replace")
    try:
        doc = parse_json(text)
    except ValueError:
        log(f"  {tool['name']}: no JSON (exit {rc}): {text[:200]!r}")
        return None
    if "error" in doc and not doc.get("end"):
        log(f"  {tool['name']}: {doc['error']}")
        return None
    end = doc.get("end", {})
    if "-u" in extra:
        s = end.get("sum", {})
        sent_bytes = s.get("bytes", 0)
        loss = s.get("lost_percent", 100.0)
        recv_bytes = sent_bytes * (1 - loss / 100.0)
        seconds = s.get("seconds") or secs
        bps = recv_bytes * 8 / seconds
    else:
        r = end.get("sum_received", {})
        recv_bytes, bps, loss = r.get("bytes", 0), r.get("bits_per_second", 0.0), 0.0
    cpu = ccpu + scpu
    return {"bps": bps, "bytes": recv_bytes, "cpu": cpu, "ccpu": ccpu, "scpu": scpu, "loss": loss}


def udp_search(tool, env, secs, db, steps):
    """Highest -b with loss < LOSS_LIMIT: a -b 0 probe, then bisection in [0, ceiling]."""
    base = ["-u", "-l", str(UDP_LEN)]
    probe = one_run(tool, env, secs, base + ["-b", "0"], db)
    if probe is None:
        return None
    sent_bps = probe["bps"] / max(1e-9, 1 - probe["loss"] / 100.0)
    if probe["loss"] < LOSS_LIMIT:
        return dict(probe, rate=sent_bps)
    # Bisection in log space between UDP_FLOOR and the ceiling: the same relative precision
    # for a 3 Gbit/s and a 30 Gbit/s tool.
    lo, hi, best = UDP_FLOOR, sent_bps, None
    for _ in range(steps):
        mid = (lo * hi) ** 0.5
        r = one_run(tool, env, secs, base + ["-b", str(int(mid))], db)
        if r is not None and r["loss"] < LOSS_LIMIT:
            lo, best = mid, dict(r, rate=mid)
        else:
            hi = mid
    return best


def ratio_stats(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "n/a"
    return f"{statistics.median(xs):.2f} [{min(xs):.2f}–{max(xs):.2f}]"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--peer", default="/usr/bin/iperf3", help="iperf3 binary to compare against")
    ap.add_argument("--wireperf", default=os.environ.get("WPB_WIREPERF", "target/release/wireperf"))
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--secs", type=int, default=3, help="seconds per TCP run")
    ap.add_argument("--udp-secs", type=int, default=2, help="seconds per UDP run")
    ap.add_argument("--udp-steps", type=int, default=5, help="bisection steps of the UDP search")
    ap.add_argument("--envs", default="loopback,veth")
    ap.add_argument("--cases", default="tcp1,tcp1l1m,tcp4,tcpR,tcpZ,udp")
    ap.add_argument("--wait-load", type=float, default=0, help="wait up to this many s for load < 1.5")
    ap.add_argument("--load-threshold", type=float, default=1.5)
    ap.add_argument("--no-build", action="store_true", help="(handled by bench/run)")
    a = ap.parse_args()

    for b in (a.wireperf, a.peer):
        if not os.access(b, os.X_OK):
            sys.exit(f"not executable: {b}")
    if os.geteuid() != 0 and "veth" in a.envs:
        sys.exit("the veth environment needs root (ip netns); use --envs loopback")
    la = loadavg()
    if la >= a.load_threshold:
        log(f"WARNING: machine is busy: load average {la:.2f} >= {a.load_threshold}")
        if a.wait_load > 0:
            la = wait_for_quiet(a.wait_load, a.load_threshold)
    load_start = la
    peer_ver = subprocess.run([a.peer, "-v"], stdout=subprocess.PIPE, text=True).stdout.splitlines()[0]
    wp = {"name": "wireperf", "kind": "wireperf", "bin": a.wireperf}
    peer = {"name": os.path.basename(a.peer), "kind": "iperf3", "bin": a.peer}
    db = tempfile.mktemp(prefix="wpb-", suffix=".sqlite")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    rows = []
    loads = [la]
    veth = Veth() if "veth" in a.envs.split(",") else None
    try:
        if veth:
            veth.__enter__()
        for env_name in a.envs.split(","):
            env = Env(env_name)
            for case in a.cases.split(","):
                label, extra = CASES[case]
                thr, eff, res = [], [], {"wireperf": [], "peer": []}
                for i in range(a.pairs):
                    order = [(wp, "wireperf"), (peer, "peer")]
                    if i % 2:
                        order.reverse()
                    got = {}
                    for tool, key in order:
                        if extra is None:
                            r = udp_search(tool, env, a.udp_secs, db, a.udp_steps)
                        else:
                            r = one_run(tool, env, a.secs, extra, db)
                        got[key] = r
                        if r:
                            res[key].append(r)
                    loads.append(loadavg())
                    w, p = got.get("wireperf"), got.get("peer")
                    if w and p and p["bps"] > 0 and p["cpu"] > 0 and w["cpu"] > 0:
                        thr.append(w["bps"] / p["bps"])
                        eff.append((w["bytes"] / w["cpu"]) / (p["bytes"] / p["cpu"]))
                    log(f"{env_name} {case} pair {i + 1}: " + ", ".join(
                        f"{k} {v['bps'] / 1e9:.2f} Gbit/s cpu {v['ccpu']:.2f}+{v['scpu']:.2f} s"
                        for k, v in got.items() if v))

                def med(key, f):
                    xs = [f(r) for r in res[key]]
                    return statistics.median(xs) if xs else float("nan")

                rows.append((env_name, label, len(thr),
                             med("wireperf", lambda r: r["bps"] / 1e9), med("peer", lambda r: r["bps"] / 1e9),
                             ratio_stats(thr),
                             med("wireperf", lambda r: r["bytes"] * 8 / 1e9 / r["cpu"]),
                             med("peer", lambda r: r["bytes"] * 8 / 1e9 / r["cpu"]),
                             ratio_stats(eff)))
    finally:
        if veth:
            veth.__exit__()
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(db + suffix)
            except OSError:
                pass

    print(f"wireperf: {a.wireperf}  peer: {a.peer} ({peer_ver})")
    print(f"pairs per case: {a.pairs}, TCP runs {a.secs} s, UDP runs {a.udp_secs} s; "
          f"load average at start {load_start:.2f}, max during run {max(loads):.2f}")
    print()
    print("| path | case | pairs | wireperf Gbit/s (med) | peer Gbit/s (med) | throughput ratio med [min–max] "
          "| wireperf Gbit per CPU-s | peer Gbit per CPU-s | bytes/CPU-s ratio med [min–max] |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.2f} | {r[4]:.2f} | {r[5]} | {r[6]:.2f} | {r[7]:.2f} | {r[8]} |")


if __name__ == "__main__":
    main()
