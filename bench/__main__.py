"""Run every benchmark and sum up its figures against their goals (``python -m bench``, ``make bench``),
list them (``--list``), or run one by name with its own options (``python -m bench NAME [ARGS...]``).

Each benchmark is also a module of its own (``python -m bench.claim_cycle --help``). They measure
on PostgreSQL and print each headline figure on a ``FIGURE`` line (``bench.figure``); the run of
them all gathers those lines into one table at the end. They are not tests.
"""

from __future__ import annotations

import re
import runpy
import subprocess
import sys
import time

BENCHMARKS = {
    "claim_cycle": "claim + submit cycles per second through gunicorn with 64 annotators (API or HTML)",
    "refresh_backlog": "pipeline refresh queue under 60 submits/s with a real Celery worker",
    "import_swords": "SWORDS import at test-split size: time, peak RSS at 0.5/1/2x, re-import",
    "generate_hits": "the whole create_batch command, step 2 of 45,705 candidates, cache cold and warm",
    "analysis_full": "statistics, agreement and export at dev-file, full-SWORDS and 10x size",
    "aggregation": "Dawid-Skene and MACE at dev, full and 10x size; the budget planner against the released dev file",
    "data_browser": "the data browser's tables at SWORDS test-split size: first, deep, filtered and sorted pages",
    "downloads": "the data browser's CSVs, the HITs CSV and every scheme's exports, against their floor",
    "pages": "every researcher page and the live poll at 1x and 10x the SWORDS test split, against its floor",
    "soak": "10,000 submits by 200 annotators on 2 servers and 2 workers, with faults, then an audit and its floor",
    "complete_evaluation": "complete evaluation of the dev split's result files: judge costs, lenient/strict/complete "
    "figures with a fifth held out and judged by the replay crowd (about an hour; not in the run of them all)",
    "fewer_labels": "the dev split replayed under each stopping policy against the release (--offline: the simulator)",
}

# What the run of them all runs, in order: (benchmark, its arguments).
PLAN: list[tuple[str, list[str]]] = [
    ("claim_cycle", ["--path", "api", "--seconds", "20"]),
    ("claim_cycle", ["--path", "html", "--seconds", "20"]),
    ("refresh_backlog", ["--rate", "60", "--seconds", "30"]),
    ("import_swords", []),
    ("generate_hits", []),
    ("analysis_full", []),
    ("aggregation", []),
    ("data_browser", []),
    ("pages", []),
    ("downloads", []),
    # The replay of the whole dev split through the queue takes a policy about ten minutes of CPU: run
    # it by name (docs/benchmarks.md, "Fewer labels"); the run of them all takes the simulator's figures.
    ("fewer_labels", ["--offline"]),
    ("soak", []),
]

FIGURE_LINE = re.compile(r"^FIGURE (?P<text>.*)$")


def run_all() -> int:
    figures: list[str] = []
    failed: list[str] = []
    for name, arguments in PLAN:
        print(f"\n=== {name} {' '.join(arguments)}", flush=True)
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "-m", f"bench.{name}", *arguments],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert process.stdout is not None
        for line in process.stdout:
            print(line, end="", flush=True)
            found = FIGURE_LINE.match(line.rstrip("\n"))
            if found:
                figures.append(found["text"])
        if process.wait() != 0:
            failed.append(f"{name} {' '.join(arguments)} (exit {process.returncode})")
        print(f"=== {name}: {time.monotonic() - started:.0f} s", flush=True)
    print("\nFigures against their goals:")
    for text in figures:
        print(f"  {text}")
    for run in failed:
        print(f"  FAILED RUN: {run}")
    return 1 if failed else 0


def main(argv: list[str]) -> int:
    if argv and argv[0] in {"-h", "--help", "--list"}:
        print("usage: python -m bench [--list | NAME [ARGS...]]\n\nbenchmarks:")
        for name, what in BENCHMARKS.items():
            print(f"  {name:<15} {what}")
        return 0
    if not argv:
        return run_all()
    name, *rest = argv
    if name not in BENCHMARKS:
        print(f"unknown benchmark {name!r}; run `python -m bench --list` for the list", file=sys.stderr)
        return 2
    sys.argv = [f"bench.{name}", *rest]
    runpy.run_module(f"bench.{name}", run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
