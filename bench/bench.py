#!/usr/bin/env python3
"""wireperf vs several iperf3 builds, interleaved in one run. Called by bench/run (which builds).

Peers: Debian's iperf3 3.12 and the stock 3.22 that scripts/stock-iperf3 unpacks (unless
--no-default-peers), plus every --peer NAME=PATH[:FLAGS] (repeatable; FLAGS are added to each
of that peer's client runs, e.g. --peer new=/opt/iperf3:"-A 1"). Each peer's --help is read
once: UDP clients get --gsro when it is listed (3.21+), and a case whose flag a peer lacks
(-Z) is marked n/a for it instead of failing.

Method (see docs/performance.md and BENCHMARKS.md):
- Every case runs in rounds ("pairs"): wireperf and each peer once, in an order rotated per
  round so a slow drift does not favour one tool; ratios are wireperf / peer within a round.
- Each run is a fresh one-shot server (`-s -1`) and a client with `-J`; both are children of
  this script, and their CPU time (user + system) comes from the kernel via wait4()'s rusage.
- Throughput is the receiver's `end.sum_received.bits_per_second` (TCP).
- Bytes per CPU-second = bytes received / (client CPU-s + server CPU-s).
- UDP: the highest `-b` with < 0.1 % loss, 1448-byte datagrams, found with the same search for
  every tool: one `-b 0` probe gives the ceiling, then a bisection in log space between
  10 Mbit/s and it, whose first point is the rate the receiver took during the probe; at least
  --udp-steps steps, then more until the bracket (lowest rate that lost / highest that did not)
  is within --udp-precision (1.1x), at most 8 more. The bracket of each search is printed, so a
  ratio's spread can be told from the search's grid.
- Ratios are wireperf / peer per round; the tables give their median and [min-max].
- Memory: peak RSS (VmHWM, read every 20 ms while the process runs) of the client and of the
  server, loopback, -t 2, -P 8 and -P 128, each tool.
- Limit: per TCP case, wireperf with -Z --skip-rx-copy added (sendfile on the sender, MSG_TRUNC
  on the receiver: no user-space copy at either end, so what is left is the kernel's TCP path);
  every tool's median is given as a fraction of it.
- Sampling cost: wireperf TCP with --why (both hosts sampled per interval) over without, in
  interleaved rounds, at each -P of --why-streams; beside the ratios, the CPU time the sampling
  itself used on each host as the --why run reports it (`wireperf.watch_cost` in -J, measured
  on the sampler thread), in percent of one core: this figure does not depend on the noise
  that the throughput ratio suffers. A wireperf server samples only when the client asks, so
  the run without --why has no sampling on either host.
- Latency probes' cost: the same with --latency (the probes beside the test, echoed by the
  wireperf server) over without, at each -P of --why-streams.
- --cpus LIST: every client and server runs under `taskset -c LIST`; `--cpus 0` models a
  one-core host (a Pi 3 under load, a router), where each cycle a tool spends is one the
  kernel's network stack does not get.
"""

import argparse
import json
import os
import shlex
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
# bit/s: the search's lower end. 100 Mbit/s left a stock iperf3 "no result" on a busy machine
# (its 208 KiB receive buffer lost > 0.1 % even there), which the tables then left out.
UDP_FLOOR = 10e6
UDP_PRECISION = 1.1  # the search's final bracket, hi/lo, unless --udp-precision
UDP_MAX_EXTRA_STEPS = 8  # steps past --udp-steps to reach the precision

CASES = {
    "tcp1": ("TCP 1 stream", []),
    # Like for like: iperf3 with wireperf's default bytes per call, to separate what the larger
    # calls give from what the receiver's low-water mark gives.
    "tcp1l1m": ("TCP 1 stream, both -l 1M", ["-l", "1M"]),
    "tcp4": ("TCP -P 4", ["-P", "4"]),
    # More streams than this machine's CPUs: wireperf's shared workers against a thread each.
    "tcp8": ("TCP -P 8", ["-P", "8"]),
    "tcpR": ("TCP -R", ["-R"]),
    "tcpZ": ("TCP -Z", ["-Z"]),
    "udp": (f"UDP {UDP_LEN} B max rate, loss < {LOSS_LIMIT}%", None),
}
EXTRAS = ("memory", "limit", "why", "latency")
# Flags of a client run that a peer may not have; the case is n/a for a peer without them.
OPTIONAL_FLAGS = ("-Z", "--skip-rx-copy", "--gsro")
DEFAULT_PEERS = (
    "iperf3-3.12=/usr/bin/iperf3",
    "iperf3-3.22=/var/cache/wireperf-peers/iperf3-3.22/iperf3",
)
LIMIT_FLAGS = ["-Z", "--skip-rx-copy"]


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
    def __init__(self, name, cpus=None):
        self.name = name
        # `--cpus LIST`: both ends run under `taskset -c LIST` (a one-core host: `--cpus 0`).
        self.pin = ["taskset", "-c", cpus] if cpus else []

    def prefix(self, side):
        if self.name == "loopback":
            return list(self.pin)
        return ["ip", "netns", "exec", NS_S if side == "client" else NS_R] + self.pin

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


def peak_rss_kib(pid):
    """VmHWM of a running process, KiB (None once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def wait_rusage(proc, timeout, other=None):
    """wait4() the child: exit status, its own CPU seconds (user + system) and peak RSS (KiB).
    `other` ({"pid": …, "peak": …}) is a second child whose peak is read meanwhile.

    The peak is the child's VmHWM as last read while it ran, not wait4()'s ru_maxrss: a child
    forked from this Python process starts with Python's resident set (about 17 MB), and Linux
    carries that into ru_maxrss across exec, so every tool would show at least that much."""
    deadline = time.time() + timeout
    peak = None
    while True:
        if other is not None:
            other["peak"] = peak_rss_kib(other["pid"]) or other.get("peak")
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, ru.ru_utime + ru.ru_stime, peak
        if time.time() >= deadline:
            proc.kill()
            pid, status, ru = os.wait4(proc.pid, 0)
            proc.returncode = -9
            return -9, ru.ru_utime + ru.ru_stime, peak
        peak = peak_rss_kib(proc.pid) or peak
        time.sleep(0.02)


def parse_json(text):
    """iperf3 3.21 may print warnings before the JSON document."""
    i = text.find("{")
    if i < 0:
        raise ValueError("no JSON in output")
    return json.loads(text[i:])


def one_run(tool, env, secs, extra, db):
    """One client+server run. Returns dict(bps, bytes, cpu, ccpu, scpu, crss, srss, loss) or
    None on failure (logged). `extra` are the case's flags; the tool's own come after them."""
    port = env.port()
    is_wp = tool["kind"] == "wireperf"
    udp = "-u" in extra
    srv_cmd = env.prefix("server") + [tool["bin"], "-s", "-1", "-p", str(port)]
    cli_cmd = env.prefix("client") + [tool["bin"], "-c", env.server_addr(), "-p", str(port),
                                      "-t", str(secs), "-J"] + extra + tool["flags"]
    if udp:
        cli_cmd += tool["udp_flags"]
    if is_wp and not tool.get("save"):
        cli_cmd.append("--no-save")
    envv = dict(os.environ, WIREPERF_DB=db)
    with tempfile.TemporaryFile() as so, tempfile.TemporaryFile() as co:
        srv = subprocess.Popen(srv_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=envv)
        t0 = time.time()
        while not env.listening(port) and time.time() - t0 < 5:
            time.sleep(0.02)
        cli = subprocess.Popen(cli_cmd, stdout=co, stderr=subprocess.STDOUT, env=envv)
        srv_peak = {"pid": srv.pid, "peak": None}
        rc, ccpu, crss = wait_rusage(cli, secs + 30, srv_peak)
        src, scpu, srss = wait_rusage(srv, 10)
        srss = srss or srv_peak["peak"]
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
    if udp:
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
    return {"bps": bps, "bytes": recv_bytes, "cpu": cpu, "ccpu": ccpu, "scpu": scpu, "loss": loss,
            "crss": crss, "srss": srss, "watch_cost": (doc.get("wireperf") or {}).get("watch_cost")}


def udp_search(tool, env, secs, db, steps, precision):
    """Highest -b with loss < LOSS_LIMIT: a -b 0 probe, then bisection in [UDP_FLOOR, ceiling]
    whose first point is the rate the receiver took during the probe. At least `steps` steps,
    then more (up to UDP_MAX_EXTRA_STEPS) until the bracket is within `precision` (hi/lo), so
    the result's grid is finer than the differences it is read for. The result carries the
    final bracket as "bracket" (hi/lo)."""
    base = ["-u", "-l", str(UDP_LEN)]
    probe = one_run(tool, env, secs, base + ["-b", "0"], db)
    if probe is None:
        return None
    sent_bps = probe["bps"] / max(1e-9, 1 - probe["loss"] / 100.0)
    if probe["loss"] < LOSS_LIMIT:
        return dict(probe, rate=sent_bps, bracket=1.0)
    # Bisection in log space between UDP_FLOOR and the ceiling: the same relative precision
    # for a 3 Gbit/s and a 30 Gbit/s tool. The first point is what the receiver took while
    # flooded: where a receiver-bound tool's answer usually is, so one step either brackets
    # the answer tightly from below or cuts the range at once.
    lo, hi, best = UDP_FLOOR, sent_bps, None
    first = min(max(probe["bps"], lo * 1.01), hi / 1.01)
    for step in range(steps + UDP_MAX_EXTRA_STEPS):
        if step >= steps and hi / lo <= precision:
            break
        mid = first if step == 0 else (lo * hi) ** 0.5
        r = one_run(tool, env, secs, base + ["-b", str(int(mid))], db)
        if r is not None and r["loss"] < LOSS_LIMIT:
            lo, best = mid, dict(r, rate=mid)
        else:
            hi = mid
    if best is not None:
        best["bracket"] = hi / lo
    return best


def ratio_stats(xs, spec=".2f"):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "n/a"
    return f"{statistics.median(xs):{spec}} [{min(xs):{spec}}–{max(xs):{spec}}]"


def watch_costs(runs, side):
    """The `wireperf.watch_cost` of `side` in each --why run that reported one."""
    return [r["watch_cost"][side] for r in runs if r and (r.get("watch_cost") or {}).get(side)]


def median(xs, f):
    xs = [f(x) for x in xs]
    return statistics.median(xs) if xs else None


def fmt(v, spec=".2f"):
    return "n/a" if v is None else format(v, spec)


def help_flags(binary):
    """The long and short options a binary's --help lists (the peer's flags check)."""
    out = subprocess.run([binary, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    return {w.rstrip(",") for w in out.split() if w.startswith("-")}


def version_line(binary):
    out = subprocess.run([binary, "-v"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    return out.splitlines()[0] if out else "unknown version"


def parse_peer(spec):
    """NAME=PATH[:FLAGS] → (name, path, flags); a bare PATH[:FLAGS] is named after its file."""
    name, sep, rest = spec.partition("=")
    if not sep:
        name, rest = "", spec
    path, _, flags = rest.partition(":")
    if not path or (sep and not name):
        raise ValueError(f"--peer {spec!r}: expected NAME=PATH[:FLAGS]")
    return name or os.path.basename(path), path, shlex.split(flags)


def make_tool(name, kind, binary, flags):
    if not os.access(binary, os.X_OK):
        hint = " (scripts/stock-iperf3 unpacks it; or --no-default-peers)" if "wireperf-peers" in binary else ""
        sys.exit(f"not executable: {binary}{hint}")
    known = help_flags(binary)
    return {"name": name, "kind": kind, "bin": binary, "flags": flags, "known": known,
            # iperf3 3.21+ sends and receives UDP with GSO/GRO only when asked.
            "udp_flags": ["--gsro"] if "--gsro" in known else [],
            "version": version_line(binary)}


def supports(tool, extra):
    return all(f in tool["known"] for f in extra if f in OPTIONAL_FLAGS)


def run_case(tool, env, a, extra, db):
    if extra is None:
        return udp_search(tool, env, a.udp_secs, db, a.udp_steps, a.udp_precision)
    return one_run(tool, env, a.secs, extra, db)


def rounds(a, tools, label, run, loads):
    """`a.pairs` rounds of `run(tool)` over `tools`, order rotated per round. Returns
    {name: [result or None per round]}."""
    res = {t["name"]: [] for t in tools}
    for i in range(a.pairs):
        k = i % len(tools)
        order = tools[k:] + tools[:k]
        for t in order:
            res[t["name"]].append(run(t))
        loads.append(loadavg())
        log(f"{label} round {i + 1}: " + ", ".join(
            f"{n} {r[-1]['bps'] / 1e9:.2f} Gbit/s cpu {r[-1]['ccpu']:.2f}+{r[-1]['scpu']:.2f} s"
            if r[-1] else f"{n} no result" for n, r in res.items()))
    return res


def ratios(ws, ps, f):
    """Per-round ratios f(w) / f(p) where both runs succeeded."""
    out = []
    for w, p in zip(ws, ps):
        if w and p and f(p) > 0 and f(w) > 0:
            out.append(f(w) / f(p))
    return out


def gbit(r):
    return r["bps"] / 1e9


def gbit_per_cpu(r):
    return r["bytes"] * 8 / 1e9 / r["cpu"] if r["cpu"] > 0 else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--peer", action="append", default=[], metavar="NAME=PATH[:FLAGS]",
                    help="an iperf3-compatible binary to compare against (repeatable); FLAGS are added "
                         "to its client runs")
    ap.add_argument("--no-default-peers", action="store_true",
                    help="only the --peer binaries, not iperf3 3.12 and the stock 3.22")
    ap.add_argument("--wireperf", default=os.environ.get("WPB_WIREPERF", "target/release/wireperf"))
    ap.add_argument("--pairs", type=int, default=5, help="rounds per case (each tool once per round)")
    ap.add_argument("--secs", type=int, default=3, help="seconds per TCP run")
    ap.add_argument("--udp-secs", type=int, default=2, help="seconds per UDP run")
    ap.add_argument("--udp-steps", type=int, default=5, help="fewest bisection steps of the UDP search")
    ap.add_argument("--udp-precision", type=float, default=UDP_PRECISION,
                    help="the UDP search goes on past --udp-steps (up to 8 more) until its bracket "
                         "(lowest rate that lost / highest that did not) is within this ratio")
    ap.add_argument("--envs", default="loopback,veth")
    ap.add_argument("--cases", default="tcp1,tcp1l1m,tcp4,tcp8,tcpR,tcpZ,udp", help=", ".join(CASES))
    ap.add_argument("--extras", default=",".join(EXTRAS),
                    help="memory (peak RSS, -P 8/-P 128), limit (-Z --skip-rx-copy reference), "
                         "why (--why sampling cost); 'none' for none")
    ap.add_argument("--mem-streams", default="8,128", help="-P values of the memory table")
    ap.add_argument("--why-streams", default="1", help="-P values of the --why and --latency cost rows")
    ap.add_argument("--mem-secs", type=int, default=2, help="seconds per memory run")
    ap.add_argument("--cpus", default=None, metavar="LIST",
                    help="run every client and server under `taskset -c LIST` (e.g. 0: a one-core host)")
    ap.add_argument("--wait-load", type=float, default=0, help="wait up to this many s for load < 1.5")
    ap.add_argument("--load-threshold", type=float, default=1.5)
    ap.add_argument("--no-build", action="store_true", help="(handled by bench/run)")
    a = ap.parse_args()
    extras = [] if a.extras == "none" else a.extras.split(",")
    for e in extras:
        if e not in EXTRAS:
            sys.exit(f"--extras: unknown {e!r} (known: {', '.join(EXTRAS)})")
    for c in a.cases.split(","):
        if c not in CASES:
            sys.exit(f"--cases: unknown {c!r} (known: {', '.join(CASES)})")
    specs = ([] if a.no_default_peers else list(DEFAULT_PEERS)) + a.peer
    if not specs:
        sys.exit("no peer: give --peer NAME=PATH or drop --no-default-peers")
    try:
        peer_defs = [parse_peer(s) for s in specs]
    except ValueError as e:
        sys.exit(str(e))
    if len({n for n, _, _ in peer_defs}) != len(peer_defs):
        sys.exit("two peers share a name: give each --peer its own NAME=")
    if os.geteuid() != 0 and "veth" in a.envs:
        sys.exit("the veth environment needs root (ip netns); use --envs loopback")
    wp = make_tool("wireperf", "wireperf", a.wireperf, [])
    peers = [make_tool(n, "iperf3", p, f) for n, p, f in peer_defs]
    tools = [wp] + peers
    if "limit" in extras and not supports(wp, LIMIT_FLAGS):
        sys.exit("--extras limit needs a wireperf with -Z and --skip-rx-copy")
    la = loadavg()
    if la >= a.load_threshold:
        log(f"WARNING: machine is busy: load average {la:.2f} >= {a.load_threshold}")
        if a.wait_load > 0:
            la = wait_for_quiet(a.wait_load, a.load_threshold)
    load_start = la
    db = tempfile.mktemp(prefix="wpb-", suffix=".sqlite")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    # (env, case) -> {tool name: [result per round]}
    results = {}
    limits = {}
    memory = {}
    why = {}
    latency = {}
    loads = [la]
    envs = a.envs.split(",")
    veth = Veth() if "veth" in envs else None
    try:
        if veth:
            veth.__enter__()
        for env_name in envs:
            env = Env(env_name, a.cpus)
            for case in a.cases.split(","):
                _, extra = CASES[case]
                able = [t for t in tools if extra is None or supports(t, extra)]
                results[(env_name, case)] = rounds(
                    a, able, f"{env_name} {case}", lambda t: run_case(t, env, a, extra, db), loads)
                if "limit" in extras and extra is not None:
                    lim = [t for t in (dict(wp, name="limit", flags=LIMIT_FLAGS),)]
                    flags = [f for f in extra if f not in LIMIT_FLAGS]
                    limits[(env_name, case)] = rounds(
                        a, lim, f"{env_name} {case} limit", lambda t: one_run(t, env, a.secs, flags, db),
                        loads)["limit"]
            if "why" in extras:
                pair = [wp, dict(wp, name="wireperf --why", flags=["--why"])]
                for n in a.why_streams.split(","):
                    why[(env_name, n)] = rounds(a, pair, f"{env_name} -P {n} --why",
                                                lambda t: one_run(t, env, a.secs, ["-P", n], db), loads)
            if "latency" in extras:
                # The probes beside the test (a wireperf server echoes them) against none.
                pair = [wp, dict(wp, name="wireperf --latency", flags=["--latency"])]
                for n in a.why_streams.split(","):
                    latency[(env_name, n)] = rounds(a, pair, f"{env_name} -P {n} --latency",
                                                    lambda t: one_run(t, env, a.secs, ["-P", n], db), loads)
        if "memory" in extras:
            env = Env("loopback", a.cpus)
            # wireperf twice: as the tables run it (--no-save) and as a user does (the test
            # saved to the history, here a scratch database), so the save's memory shows.
            saving = dict(wp, name="wireperf, saving", save=True)
            mem_tools = [tools[0], saving] + tools[1:]
            for n in a.mem_streams.split(","):
                memory[n] = rounds(a, mem_tools, f"memory -P {n}",
                                   lambda t: one_run(t, env, a.mem_secs, ["-P", n], db), loads)
    finally:
        if veth:
            veth.__exit__()
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(db + suffix)
            except OSError:
                pass
    report(a, tools, peers, extras, results, limits, memory, why, latency, load_start, max(loads))


def report(a, tools, peers, extras, results, limits, memory, why, latency, load_start, load_max):
    """The Markdown BENCHMARKS.md keeps: the command, one table per peer, then the extras."""
    print("Command: `bench/run " + shlex.join(sys.argv[1:]) + "`")
    print()
    for t in tools:
        flags = " ".join(t["flags"] + (["(UDP: " + " ".join(t["udp_flags"]) + ")"] if t["udp_flags"] else []))
        print(f"- {t['name']}: `{t['version']}`" + (f", client flags {flags}" if flags else ""))
    print(f"- rounds per case: {a.pairs}, TCP runs {a.secs} s, UDP runs {a.udp_secs} s; "
          f"load average at start {load_start:.2f}, max during run {load_max:.2f}")
    if a.cpus:
        print(f"- every client and server pinned with `taskset -c {a.cpus}`")
    brackets = {t["name"]: [r["bracket"] for (_, case), res in results.items() if case == "udp"
                            for r in res.get(t["name"], []) if r and r.get("bracket")] for t in tools}
    if any(brackets.values()):
        print("- UDP search's final bracket (lowest rate that lost / highest that did not), med [min–max]: "
              + ", ".join(f"{n} {ratio_stats(b, '.3f')}" for n, b in brackets.items() if b))
    wp = tools[0]["name"]
    for p in peers:
        print()
        print(f"### wireperf vs {p['name']}")
        print()
        print(f"| path | case | rounds | wireperf Gbit/s (med) | {p['name']} Gbit/s (med) | throughput ratio "
              f"med [min–max] | wireperf Gbit per CPU-s | {p['name']} Gbit per CPU-s | bytes/CPU-s ratio "
              f"med [min–max] |")
        print("|---|---|---|---|---|---|---|---|---|")
        for (env, case), res in results.items():
            label = CASES[case][0]
            if p["name"] not in res:
                print(f"| {env} | {label} | 0 | n/a | n/a (not supported) | n/a | n/a | n/a | n/a |")
                continue
            ws, ps = res[wp], res[p["name"]]
            thr = ratios(ws, ps, gbit)
            eff = ratios(ws, ps, gbit_per_cpu)
            ok = lambda rs: [r for r in rs if r]  # noqa: E731
            print(f"| {env} | {label} | {len(thr)} | {fmt(median(ok(ws), gbit))} | {fmt(median(ok(ps), gbit))} "
                  f"| {ratio_stats(thr)} | {fmt(median(ok(ws), gbit_per_cpu))} "
                  f"| {fmt(median(ok(ps), gbit_per_cpu))} | {ratio_stats(eff)} |")
    if limits:
        print()
        print("### Limit: each tool's median as a fraction of wireperf with -Z --skip-rx-copy")
        print()
        names = [t["name"] for t in tools]
        print("| path | case | limit Gbit/s (med) | " + " | ".join(names) + " |")
        print("|---|---|---|" + "---|" * len(names))
        for key, lim in limits.items():
            top = median([r for r in lim if r], gbit)
            cells = []
            for n in names:
                m = median([r for r in results[key].get(n, []) if r], gbit)
                cells.append(fmt(m / top) if m is not None and top else "n/a")
            print(f"| {key[0]} | {CASES[key[1]][0]} | {fmt(top)} | " + " | ".join(cells) + " |")
    if memory:
        print()
        print("### Memory: peak RSS, MB (client / server), loopback, -t " + str(a.mem_secs))
        print()
        cols = list(memory)
        print("| tool | " + " | ".join(f"-P {n}" for n in cols) + " |")
        print("|---|" + "---|" * len(cols))
        for name in memory[cols[0]]:
            cells = []
            for n in cols:
                rs = [r for r in memory[n][name] if r and r["crss"] and r["srss"]]
                c, s = median(rs, lambda r: r["crss"] / 1024), median(rs, lambda r: r["srss"] / 1024)
                cells.append(f"{fmt(c, '.1f')} / {fmt(s, '.1f')}" if rs else "n/a (failed)")
            print(f"| {name} | " + " | ".join(cells) + " |")
    if why:
        print()
        print("### Sampling cost: wireperf TCP with --why / without")
        print()
        print("Sampling CPU: what the sampler thread used while the test ran, in % of one core, med "
              "[min–max] over the --why runs, as `wireperf.watch_cost` reports it (measured, not "
              "affected by throughput noise); ms: med CPU ms during the test / before and after it.")
        print()
        print("| path | streams | rounds | throughput ratio med [min–max] | bytes/CPU-s ratio med [min–max] "
              "| client sampling % of a core | server sampling % of a core | client ms during / edges "
              "| server ms during / edges |")
        print("|---|---|---|---|---|---|---|---|---|")
        for (env, n), res in why.items():
            on, off = res["wireperf --why"], res[wp]
            thr = ratios(on, off, gbit)
            costs = {side: watch_costs(on, side) for side in ("client", "server")}
            cells = [ratio_stats([c["core_percent"] for c in cs if c.get("core_percent") is not None], ".3f")
                     for cs in costs.values()]
            cells += [f"{fmt(median(cs, lambda c: c['cpu_ms']), '.1f')} / {fmt(median(cs, lambda c: c['edges_cpu_ms']), '.1f')}"
                      if cs else "n/a (not reported)" for cs in costs.values()]
            print(f"| {env} | {n} | {len(thr)} | {ratio_stats(thr)} | {ratio_stats(ratios(on, off, gbit_per_cpu))} | "
                  + " | ".join(cells) + " |")
    if latency:
        print()
        print("### Latency probes' cost: wireperf TCP with --latency / without")
        print()
        print("| path | streams | rounds | throughput ratio med [min–max] | bytes/CPU-s ratio med [min–max] |")
        print("|---|---|---|---|---|")
        for (env, n), res in latency.items():
            on, off = res["wireperf --latency"], res[wp]
            thr = ratios(on, off, gbit)
            print(f"| {env} | {n} | {len(thr)} | {ratio_stats(thr)} | {ratio_stats(ratios(on, off, gbit_per_cpu))} |")
    skipped = [e for e in EXTRAS if e not in extras]
    if skipped:
        print()
        print("Not run: " + ", ".join(skipped) + " (--extras).")


if __name__ == "__main__":
    main()
