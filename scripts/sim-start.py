#!/usr/bin/env python3
"""Start time and memory of `helmdeck sim`, binaries side by side (issue 11's regression check).

Usage: scripts/sim-start.py [--runs N] NAME=BINARY [NAME=BINARY ...]

For each run and binary, in turn: start `BINARY sim --kubeconfig-out F`, time until /version
answers (start time), read VmRSS (idle), then fetch discovery and every OpenAPI v3 document the
server lists (what helm and kubectl fetch before their first write) and read VmRSS and VmHWM
again. Prints the median per binary and the ratio to the first one.
"""
import json, os, statistics, subprocess, sys, tempfile, time, urllib.request

def rss(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024.0
    return float("nan")

def get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())

def one(binary):
    with tempfile.TemporaryDirectory() as d:
        kc = os.path.join(d, "kubeconfig")
        t0 = time.monotonic()
        p = subprocess.Popen([binary, "sim", "--kubeconfig-out", kc],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            server = None
            while time.monotonic() - t0 < 60:
                if server is None and os.path.exists(kc):
                    for line in open(kc):
                        if "server:" in line:
                            server = line.split("server:", 1)[1].strip()
                if server:
                    try:
                        get(server + "/version")
                        break
                    except Exception:
                        pass
                time.sleep(0.002)
            start = time.monotonic() - t0
            idle = rss(p.pid, "VmRSS")
            t1 = time.monotonic()
            get(server + "/api"); groups = get(server + "/apis")
            for g in groups.get("groups", []):
                for v in g.get("versions", []):
                    get(f"{server}/apis/{v['groupVersion']}")
            paths = get(server + "/openapi/v3").get("paths", {})
            for path, ref in paths.items():
                get(server + ref.get("serverRelativeURL", "/openapi/v3/" + path))
            discovery = time.monotonic() - t1
            return dict(start=start, idle=idle, discovery=discovery,
                        rss=rss(p.pid, "VmRSS"), hwm=rss(p.pid, "VmHWM"), docs=len(paths))
        finally:
            p.terminate(); p.wait()

def main(argv):
    runs = 5
    if argv[:1] == ["--runs"]:
        runs, argv = int(argv[1]), argv[2:]
    bins = [a.split("=", 1) for a in argv]
    res = {n: [] for n, _ in bins}
    for _ in range(runs):
        for n, b in bins:
            res[n].append(one(b))
    base = None
    print(f"{'binary':10} {'start ms':>9} {'idle MiB':>9} {'disc+openapi ms':>16} {'RSS MiB':>8} {'peak MiB':>9} {'openapi docs':>12}")
    for n, _ in bins:
        m = {k: statistics.median(r[k] for r in res[n]) for k in res[n][0]}
        print(f"{n:10} {m['start']*1000:9.1f} {m['idle']:9.1f} {m['discovery']*1000:16.1f} {m['rss']:8.1f} {m['hwm']:9.1f} {m['docs']:12.0f}")
        if base is None:
            base = m
        else:
            print(f"{'ratio':10} {m['start']/base['start']:9.2f} {m['idle']/base['idle']:9.2f} {m['discovery']/base['discovery']:16.2f} {m['rss']/base['rss']:8.2f} {m['hwm']/base['hwm']:9.2f}")

if __name__ == "__main__":
    main(sys.argv[1:])
