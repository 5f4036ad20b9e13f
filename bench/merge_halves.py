"""Two (or more) parts of one latency run as one result: ``python bench/merge_halves.py OUT
A.json B.json``.

On this 2-core machine the 20-game sets are read as two halves side by side, a core each
(``bench/live.py latency --games DIR --count 10`` on games 0 to 9 and 10 to 19, each with
``--out``); the README's numbers are the halves added up. Counts add up, percentages are
taken again over all turns, the latency's mean is weighted by turns, and its p95 and max are
the larger part's (a p95 cannot be rebuilt from two p95s).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

PERCENT_OF_TURNS = {
    "turns_right_pct": "turns_right",
    "committed_wrong_pct": "committed_wrong",
    "turns_right_by_cell_pct": "turns_right_by_cell",
}


def merged(parts: list[dict]) -> dict:
    """The latency results ``parts`` (each ``bench/live.py``'s ``latency`` object) as one."""
    first = parts[0]
    out = dict(first)
    out["source"] = " + ".join(part["source"] for part in parts)
    for key, value in first.items():
        if isinstance(value, int | float) and not isinstance(value, bool) and key[-4:] != "_pct":
            out[key] = sum(part[key] for part in parts)
    out["games"] = [game for part in parts for game in part["games"]]
    turns = max(out["turns"], 1)
    for pct, count in PERCENT_OF_TURNS.items():
        if count in out:
            out[pct] = round(100 * out[count] / turns, 2)
    quiet = [part["games_without_question"].split("/") for part in parts]
    out["games_without_question"] = (
        f"{sum(int(q) for q, _ in quiet)}/{sum(int(n) for _, n in quiet)}"
    )
    timings = [part["settled_to_observation"] for part in parts]
    n = sum(t["n"] for t in timings)
    out["settled_to_observation"] = {
        "n": n,
        "mean_ms": round(sum(t["mean_ms"] * t["n"] for t in timings) / max(n, 1), 2),
        "p95_ms": max(t["p95_ms"] for t in timings),
        "max_ms": max(t["max_ms"] for t in timings),
        "note": "two halves run side by side, a core each; p95 is the larger half's",
    }
    if "questions_by_doubt" in first:
        kinds: dict[str, dict[str, int]] = {}
        for part in parts:
            for kind, tally in part["questions_by_doubt"].items():
                total = kinds.setdefault(kind, {"asked": 0, "best_option_right": 0})
                for key in total:
                    total[key] += tally[key]
        out["questions_by_doubt"] = dict(sorted(kinds.items(), key=lambda kv: -kv[1]["asked"]))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the merged result (JSON)")
    parser.add_argument("parts", nargs="+", help="the parts' results (bench/live.py --out)")
    args = parser.parse_args(argv)
    runs = [json.loads(Path(path).read_text()) for path in args.parts]
    missing = [path for path, run in zip(args.parts, runs, strict=True) if "latency" not in run]
    if missing:
        parser.error(f"not a latency result: {', '.join(missing)}")
    result = dict(runs[0])
    result["latency"] = merged([run["latency"] for run in runs])
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    summary = {k: v for k, v in result["latency"].items() if not isinstance(v, list | dict)}
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
