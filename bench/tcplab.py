#!/usr/bin/env python3
"""gorun over TCP against Open MPI's btl/tcp and a plain Go TCP floor,
between two namespace hosts.

usage (root, from the repository root):
    python3 bench/tcplab.py [--rounds N] [--max SIZE] [--base DIR] [--bin DIR] MODE...

MODE is lat, bw, bibw or mr (two ranks, one per host). The script:
  1. builds ./cmd/gorun, ./bench/osu and ./bench/tcpfloor, and bench.c with
     Debian's Open MPI (openmpi-bin and libopenmpi-dev are installed when
     missing);
  2. creates two network-namespace hosts h1, h2 (10.77.0.1-2/24, veth +
     bridge in a namespace of their own, names unique to this run), each
     with its own hostname, /etc/hosts, /tmp and /dev/shm; an ssh stand-in
     ("agent") enters them;
  3. runs, alternately (A B C A B C ...), inside h1:
       gorun -np 2 --host h1:1,h2:1 --mca plm_ssh_agent agent osu MODE
       mpirun -np 2 --host h1,h2 --bind-to none --mca plm_rsh_agent agent
              --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include eth0
              --mca oob_tcp_if_include eth0 bench MODE
       tcpfloor -addr 10.77.0.2:7777 MODE     (its server on h2)
     and, with --base DIR, DIR/gorun and DIR/osu as a fourth side ("base",
     e.g. main's build, for A/B comparisons in one session);
  4. prints per size the median of each side and the ratios gorun / other
     (lat: lower is better for gorun; bw, bibw, mr: higher is better);
  5. deletes everything it created, also on failure or Ctrl-C; stopped
     (SIGTERM, SIGHUP, Ctrl-C) after at least one round of a mode, it
     first reports that mode from the rounds that finished.

Only same-run ratios mean anything on a shared machine; numbers taken while
other work runs are noise.
"""
import argparse, atexit, glob, os, re, secrets, shutil, signal, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sh(*args, check=True, **kw):
    return subprocess.run(list(args), check=check, **kw)


class Lab:
    def __init__(self, keep):
        self.id = secrets.token_hex(3)
        self.sw = f"gb{self.id}-sw"
        self.dir = tempfile.mkdtemp(prefix=f"gorun-tcplab-{self.id}-")
        os.chmod(self.dir, 0o755)
        self.keep = [self.dir] + keep
        self.made = []
        atexit.register(self.down)

    def ns(self, i):
        return f"gb{self.id}-h{i}"

    def up(self):
        with open(os.path.join(self.dir, "hosts"), "w") as f:
            f.write("127.0.0.1 localhost\n10.77.0.1 h1\n10.77.0.2 h2\n")
        br = f"gb{self.id}br"
        cmds = [["netns", "add", self.sw], ["-n", self.sw, "link", "add", br, "type", "bridge"],
                ["-n", self.sw, "link", "set", br, "up"]]
        for i in (1, 2):
            v, p = f"gb{self.id}v{i}", f"gb{self.id}p{i}"
            cmds += [["netns", "add", self.ns(i)], ["link", "add", v, "type", "veth", "peer", "name", p],
                     ["link", "set", v, "netns", self.ns(i)], ["link", "set", p, "netns", self.sw],
                     ["-n", self.ns(i), "link", "set", v, "name", "eth0"],
                     ["-n", self.ns(i), "addr", "add", f"10.77.0.{i}/24", "dev", "eth0"],
                     ["-n", self.ns(i), "link", "set", "eth0", "up"], ["-n", self.ns(i), "link", "set", "lo", "up"],
                     ["-n", self.sw, "link", "set", p, "master", br], ["-n", self.sw, "link", "set", p, "up"]]
        for c in cmds:
            sh("ip", *c)
        binds = "".join(f'mkdir $st/{k} && mount --bind "{d}" $st/{k}\n' for k, d in enumerate(self.keep))
        rebinds = "".join(f'mkdir -p "{d}" && mount --bind $st/{k} "{d}" && umount $st/{k} && rmdir $st/{k}\n'
                          for k, d in enumerate(self.keep))
        self.onhost = os.path.join(self.dir, "onhost")
        with open(self.onhost, "w") as f:
            f.write(f"""#!/bin/sh
n=$1; shift
exec nsenter --net=/run/netns/gb{self.id}-h$n unshare --uts --mount --propagation private sh -c '
set -e
hostname h'$n'
mount --bind {self.dir}/hosts /etc/hosts
st=$(mktemp -d /mnt/gb{self.id}.XXXXXX)
{binds}mount -t tmpfs -o size=1g tmpfs /tmp
mount -t tmpfs -o size=1g tmpfs /dev/shm
{rebinds}rmdir $st
exec "$@"' sh "$@"
""")
        self.agent = os.path.join(self.dir, "agent")
        with open(self.agent, "w") as f:
            f.write(f"""#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in -o|-p|-l|-i|-F) shift 2;; -*) shift;; *) break;; esac; done
host=$1; shift; n=${{host#h}}
exec {self.onhost} "$n" sh -c "$*"
""")
        os.chmod(self.onhost, 0o755)
        os.chmod(self.agent, 0o755)

    def run(self, host, args, timeout=1800):
        p = subprocess.run([self.onhost, str(host)] + args, capture_output=True, text=True, timeout=timeout)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(args)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
        return p.stdout

    def down(self):
        for i in (1, 2):
            pids = subprocess.run(["ip", "netns", "pids", self.ns(i)], capture_output=True, text=True).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), 9)
                except (ProcessLookupError, ValueError):
                    pass
        for n in (self.ns(1), self.ns(2), self.sw):
            subprocess.run(["ip", "netns", "del", n], stderr=subprocess.DEVNULL)
        left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.strip()
        if not left and os.path.ismount("/run/netns"):
            subprocess.run(["umount", "/run/netns"])
            try:
                os.rmdir("/run/netns")
            except OSError:
                pass
        for d in glob.glob(f"/mnt/gb{self.id}.*"):
            for k in range(len(self.keep)):
                try:
                    os.rmdir(os.path.join(d, str(k)))
                except OSError:
                    pass
            try:
                os.rmdir(d)
            except OSError:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)


def parse(mode, text):
    out = {}
    for line in text.splitlines():
        f = line.split()
        if not f or line.startswith("#") or not re.fullmatch(r"\d+", f[0]) or len(f) < 2:
            continue
        out[int(f[0])] = float(f[2] if mode == "mr" and len(f) > 2 else f[1])
    return out


def build(work, ref_c, base):
    """Builds gorun, osu and tcpfloor (this checkout) and bench.c into work;
    with base (a directory holding another gorun and osu, e.g. main's), the
    script runs those too, as side "base"."""
    if base:
        for b in ("gorun", "osu"):
            if not os.access(os.path.join(base, b), os.X_OK):
                sys.exit(f"tcplab.py: --base {base}: no executable {b} in it")
    for out, pkg in (("gorun", "./cmd/gorun"), ("osu", "./bench/osu"), ("tcpfloor", "./bench/tcpfloor")):
        sh("go", "build", "-o", os.path.join(work, out), pkg, cwd=ROOT)
    if not shutil.which("mpicc.openmpi"):
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        sh("apt-get", "-o", "DPkg::Lock::Timeout=600", "install", "-y", "-q", "openmpi-bin", "libopenmpi-dev",
           env=env, stdout=subprocess.DEVNULL)
    sh("mpicc.openmpi", "-O2", "-Wno-stringop-overflow", "-o", os.path.join(work, "bench"), ref_c)


def commands(lab, work, base, mode, size_max):
    """The command of every side, each run inside h1."""
    def gorun(d):
        return [os.path.join(d, "gorun"), "-np", "2", "--host", "h1:1,h2:1", "--mca", "plm_ssh_agent", lab.agent,
                os.path.join(d, "osu"), mode, size_max]
    # --bind-to none: each host's orted binds its one rank to core 0, and
    # the two "hosts" share one machine, so both ranks would time-share
    # core 0: every message then waits for the scheduler's tick (about
    # 4 ms a half round trip; the benchmark's 10100 ping-pongs per size
    # looked like a hang).
    ompi = ["mpirun.openmpi", "--allow-run-as-root", "-np", "2", "--host", "h1,h2", "--bind-to", "none",
            "--mca", "plm_rsh_agent", lab.agent, "--mca", "pml", "ob1", "--mca", "btl", "self,tcp",
            "--mca", "btl_tcp_if_include", "eth0", "--mca", "oob_tcp_if_include", "eth0",
            os.path.join(work, "bench"), mode, size_max]
    floor = [os.path.join(work, "tcpfloor"), "-addr", "10.77.0.2:7777", mode, size_max]
    sides = {"gorun": gorun(work), "Open MPI": ompi, "floor": floor}
    if base:
        sides["base"] = gorun(base)
    return sides


def run_side(lab, work, name, cmd, timeout):
    if name != "floor":
        return lab.run(1, cmd, timeout=timeout)
    server = subprocess.Popen([lab.onhost, "2", os.path.join(work, "tcpfloor"), "-server", "-addr", "10.77.0.2:7777"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        out = lab.run(1, cmd, timeout=timeout)
        server.wait(timeout=30)
        return out
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    # The reference program lives beside the checkout (../shared/bench), or
    # two levels up from a worktree (../../shared/bench).
    refs = [os.path.join(ROOT, *up, "shared", "bench", "bench.c") for up in (("..",), ("..", ".."))]
    ap.add_argument("--bench-c", default=next((r for r in refs if os.path.exists(r)), refs[0]))
    ap.add_argument("--max", default="4194304", help="largest size (bytes)")
    ap.add_argument("--base", help="directory with another build of gorun and osu (say, main's), run as side base")
    ap.add_argument("--bin", help="directory with gorun, osu, tcpfloor and bench already built (nothing is built); "
                    "lets a shared machine's benchmark lock be held only while measuring")
    ap.add_argument("--timeout", type=int, default=600, help="seconds one run of one side may take")
    ap.add_argument("modes", nargs="+", choices=["lat", "bw", "bibw", "mr"])
    a = ap.parse_args()
    # SIGTERM (timeout, kill) and SIGHUP end the script through SystemExit,
    # and Ctrl-C through KeyboardInterrupt, so the teardown registered with
    # atexit runs.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(143))
    # Ctrl-C even when started with SIGINT ignored (a background job of a
    # non-interactive shell inherits that).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if os.geteuid() != 0:
        sys.exit("tcplab.py: needs root (network namespaces)")
    base = os.path.abspath(a.base) if a.base else None
    if a.bin:
        work = os.path.abspath(a.bin)
        for b in ("gorun", "osu", "tcpfloor", "bench"):
            if not os.access(os.path.join(work, b), os.X_OK):
                sys.exit(f"tcplab.py: --bin {a.bin}: no executable {b} in it")
    else:
        work = tempfile.mkdtemp(prefix="gorun-tcplab-bin-")
        atexit.register(shutil.rmtree, work, True)
        os.chmod(work, 0o755)
        build(work, a.bench_c, base)
    lab = Lab([work] + ([base] if base else []))
    lab.up()
    for mode in a.modes:
        res, done = {}, 0
        try:
            for r in range(a.rounds):
                for name, cmd in commands(lab, work, base, mode, a.max).items():
                    for size, v in parse(mode, run_side(lab, work, name, cmd, a.timeout)).items():
                        res.setdefault(name, {}).setdefault(size, []).append(v)
                done = r + 1
                print(f"# {mode}: round {done}/{a.rounds} done", file=sys.stderr)
        except (SystemExit, KeyboardInterrupt):
            # Stopped (timeout, Ctrl-C): the rounds that finished still count.
            if done:
                print(f"# {mode}: stopped after {done} of {a.rounds} rounds", file=sys.stderr)
                report(mode, done, {n: {s: v[:done] for s, v in sizes.items()} for n, sizes in res.items()})
            raise
        report(mode, a.rounds, res)


def report(mode, rounds, res):
    """Prints the medians of every side and the ratios of gorun to the others."""
    unit = "us" if mode == "lat" else ("messages/s" if mode == "mr" else "MB/s")
    better = "lower" if mode == "lat" else "higher"
    names = [n for n in ("gorun", "base", "Open MPI", "floor") if n in res]
    others = [n for n in names if n != "gorun"]
    print(f"## {mode} ({unit}, median of {rounds} interleaved runs; ratio = gorun / other, {better} is better for gorun)")
    print(f"{'size':>10}" + "".join(f" {n:>12}" for n in names) + "".join(f" {'/' + n:>10}" for n in others))
    sizes = sorted(set.intersection(*(set(res[n]) for n in names)))
    for size in sizes:
        med = {n: statistics.median(res[n][size]) for n in names}
        line = f"{size:>10}" + "".join(f" {med[n]:>12.2f}" for n in names)
        line += "".join(f" {med['gorun'] / med[n] if med[n] else float('nan'):>10.2f}" for n in others)
        print(line, flush=True)


if __name__ == "__main__":
    main()
