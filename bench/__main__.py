"""List the benchmarks, or run one by name: ``python -m bench [NAME [ARGS...]]``.

Each benchmark is also a module of its own (``python -m bench.claim_cycle --help``); they
measure speed on PostgreSQL and print medians and ratios. They are not tests.
"""

from __future__ import annotations

import runpy
import sys

BENCHMARKS = {
    "import_swords": "SWORDS import at test-split size: time, peak RSS at 0.5/1/2x, re-import",
    "generate_hits": "step-2 HIT generation for ~45,000 candidates",
    "claim_cycle": "claim + submit cycles per second through gunicorn with 64 annotators",
    "analysis_full": "statistics, agreement and export at dev-file and full-SWORDS size",
    "refresh_backlog": "pipeline refresh queue under 60 submits/s with a real Celery worker",
}


def main(argv: list[str]) -> int:
    if not argv or argv[0] in {"-h", "--help"}:
        print("usage: python -m bench NAME [ARGS...]\n\nbenchmarks:")
        for name, what in BENCHMARKS.items():
            print(f"  {name:<15} {what}")
        return 0
    name, *rest = argv
    if name not in BENCHMARKS:
        print(f"unknown benchmark {name!r}; run `python -m bench` for the list", file=sys.stderr)
        return 2
    sys.argv = [f"bench.{name}", *rest]
    runpy.run_module(f"bench.{name}", run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
