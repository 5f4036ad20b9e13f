"""SSE benchmark: N clients on loopback follow the scripted demo game of
``meeplecam serve --demo scripted`` (what is measured is the fan-out to the phones, not vision).

Every ``state`` event carries the server's commit time (``committed``, Unix seconds); each client
records receipt time minus commit time. The server's RSS is sampled from /proc while it runs.

    .venv/bin/python bench/sse.py                 # 20 clients, 60 s
    .venv/bin/python bench/sse.py --clients 20 --minutes 10 --interval 1 --out sse.json

Prints a summary and (with --out) writes all numbers as JSON. Not a test.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def rss_slope(rss: list, duration: float) -> float | None:
    """MB per 10 minutes, least squares over the samples after warm-up (the first quarter of the
    run: imports, caches and the first game's allocations are not a leak)."""
    after = [(t, m) for t, m in rss if m is not None and t >= duration / 4]
    if len(after) < 3:
        return None
    return statistics.linear_regression([t for t, _ in after], [m for _, m in after]).slope * 600


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


class Client(threading.Thread):
    def __init__(self, port: int, stop: threading.Event):
        super().__init__(daemon=True)
        self.port = port
        self.stop_event = stop
        self.latencies: list[float] = []
        self.events = 0
        self.keepalives = 0
        self.error: str | None = None

    def run(self) -> None:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            conn.request("GET", "/events", headers={"Accept": "text/event-stream"})
            response = conn.getresponse()
            first = True
            while not self.stop_event.is_set():
                line = response.fp.readline()
                if not line:
                    self.error = "stream ended"
                    return
                received = time.time()
                if line.startswith(b": keep-alive"):
                    self.keepalives += 1
                elif line.startswith(b"data: "):
                    data = json.loads(line[6:])
                    self.events += 1
                    if first:  # the current state on connecting, not a fresh commit
                        first = False
                        continue
                    self.latencies.append(received - data["committed"])
            conn.close()
        except OSError as exc:
            self.error = f"{type(exc).__name__}: {exc}"


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--minutes", type=float, default=1.0, help="how long to run (default 1)")
    parser.add_argument("--interval", type=float, default=0.5, help="demo step, seconds")
    parser.add_argument("--questions", type=float, default=0.0, help="demo question chance")
    parser.add_argument("--sample", type=float, default=None, help="RSS sample period, seconds")
    parser.add_argument("--out", help="write the numbers as JSON here")
    args = parser.parse_args(argv)

    port = free_port()
    workdir = tempfile.mkdtemp(prefix="meeplecam-bench-")
    record = Path(workdir) / "bench.json"
    command = [
        sys.executable, "-c", "import sys; from meeplecam.cli import main; sys.exit(main())",
        "serve", "--demo", "scripted", "--host", "127.0.0.1", "--port", str(port), "--record", str(record),
        "--demo-interval", str(args.interval), "--demo-questions", str(args.questions),
    ]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    print("the server did not start", file=sys.stderr)
                    return 1
                time.sleep(0.05)
        stop = threading.Event()
        clients = [Client(port, stop) for _ in range(args.clients)]
        for c in clients:
            c.start()
        duration = args.minutes * 60
        sample = args.sample or (60.0 if duration >= 600 else max(1.0, duration / 12))
        start = time.monotonic()
        rss = [(0.0, rss_mb(server.pid))]
        while (elapsed := time.monotonic() - start) < duration:
            time.sleep(min(sample, duration - elapsed))
            rss.append((round(time.monotonic() - start, 1), rss_mb(server.pid)))
        stop.set()
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    for c in clients:
        c.join(timeout=2)

    latencies = [x for c in clients for x in c.latencies]
    turns = len(json.loads(record.read_text())["turns"]) if record.exists() else None
    slope = rss_slope(rss, duration)
    result = {
        "command": " ".join(["bench/sse.py", *(argv if argv is not None else sys.argv[1:])]),
        "clients": args.clients,
        "seconds": duration,
        "demo_interval": args.interval,
        "events_per_client": [c.events for c in clients],
        "errors": [c.error for c in clients if c.error and not stop.is_set()],
        "latency_ms": {
            "n": len(latencies),
            "p50": round(percentile(latencies, 0.50) * 1000, 2),
            "p95": round(percentile(latencies, 0.95) * 1000, 2),
            "max": round(max(latencies) * 1000, 2) if latencies else None,
            "mean": round(statistics.fmean(latencies) * 1000, 2) if latencies else None,
        },
        "rss_mb": [(t, round(m, 1) if m is not None else None) for t, m in rss],
        "rss_slope_mb_per_10min": round(slope, 2) if slope is not None else None,
        "turns_saved": turns,
        "cpu_count": os.cpu_count(),
    }
    lat = result["latency_ms"]
    print(
        f"{args.clients} SSE clients, {duration:.0f} s, demo step {args.interval} s: "
        f"{lat['n']} events received; latency commit->receipt p50 {lat['p50']} ms, "
        f"p95 {lat['p95']} ms, max {lat['max']} ms"
    )
    print("server RSS (s, MB): " + ", ".join(f"{t:.0f}:{m}" for t, m in result["rss_mb"]))
    if slope is not None:
        print(f"RSS slope after warm-up: {slope:+.2f} MB per 10 min")
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
