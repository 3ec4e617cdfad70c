"""Complete evaluation on the SWORDS v1.1 dev split (docs/evaluation.md, "Complete evaluation: the
dev split"): what judging each result file's unscored substitutes costs, and the lenient, strict
and complete figures once the replay crowd has judged them.

    python -m bench.complete_evaluation [--dev FILE] [--results DIR] [--hold-out 0.2] [--seed 0]

The three result files of the dev split rank the benchmark's own candidates, so on the whole
benchmark nothing of theirs is unscored (the run says so first). To measure what the complete
evaluation recovers, a seeded share (``--hold-out``) of the benchmark's substitutes is left out
of the import with its labels, as substitutes a benchmark never collected; each system's top-10
substitutes among them are then sent to be judged (one proposal and batch per system, in turn)
and the replay crowd answers from the released labels. The complete figures should return to
those of the whole benchmark (``reference.json``), within their intervals. Goal, per system: the
whole benchmark's F@10 inside the complete F@10's interval (a FIGURE line: how far outside it,
in points, 0 when inside).

Runs on PostgreSQL in its own database (BENCH_DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/crowdlex_bench_complete), created and migrated if missing;
the benchmarks are built afresh each run.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import django_setup, ensure_database, figure

DATA = Path(os.environ.get("CROWDLEX_SHARED_DATA", "/work/shared/data"))
SYSTEMS = ("roget-alpha", "random-seed0", "oracle")
# Saved under these names ("oracle" is the leaderboard's own row).
SAVED = {"oracle": "oracle-ranker"}
SETTINGS = ("lenient", "strict", "complete")


def held_out_copy(source: Path, target: Path, *, share: float, seed: int) -> int:
    """The SWORDS file without a seeded ``share`` of its substitutes (and their labels); returns
    how many were left out."""
    with gzip.open(source, "rt", encoding="utf-8") as stream:
        document = json.load(stream)
    rng = random.Random(seed)
    left_out = {sid for sid in sorted(document["substitutes"]) if rng.random() < share}
    document["substitutes"] = {sid: row for sid, row in document["substitutes"].items() if sid not in left_out}
    document["substitute_labels"] = {
        sid: labels for sid, labels in document["substitute_labels"].items() if sid not in left_out
    }
    with gzip.open(target, "wt", encoding="utf-8") as stream:
        json.dump(document, stream)
    return len(left_out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dev", default=str(DATA / "swords-v1.1_dev.json.gz"))
    parser.add_argument("--results", default=str(DATA / "eval-dev"))
    parser.add_argument("--hold-out", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    url = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/crowdlex_bench_complete")
    ensure_database(url)
    os.environ["DATABASE_URL"] = url
    django_setup()
    from django.core.management import call_command

    from analysis.models import SystemEvaluation
    from analysis.services import (
        JudgingError,
        judgement_propose,
        judgement_report,
        judgement_start,
        result_load,
        system_evaluate,
        system_evaluation_save,
    )
    from annotation.models import Benchmark
    from annotation.services import benchmark_import
    from review.replay import crowd_replay
    from review.services import benchmark_refresh

    call_command("migrate", verbosity=0)
    results = Path(args.results)
    reference = json.loads((results / "reference.json").read_text())["systems"]
    files = {name: results / reference[name]["result"] for name in SYSTEMS}
    out: dict[str, Any] = {"hold_out": args.hold_out, "seed": args.seed, "whole": {}, "systems": {}}

    def imported(name: str, path: Path) -> Benchmark:
        Benchmark.objects.filter(name=name).delete()
        started = time.perf_counter()
        benchmark_import(path_or_file=path, benchmark_name=name, fmt="swords")
        benchmark = Benchmark.objects.get(name=name)
        benchmark_refresh(benchmark=benchmark, full=True)
        print(f"imported {name} in {time.perf_counter() - started:.1f} s", flush=True)
        return benchmark

    # 1. The whole benchmark: every substitute of the three files is scored already.
    whole = imported("bench-complete-whole", Path(args.dev))
    for name, path in files.items():
        result = result_load(benchmark=whole, source=path, keep=True)
        saved = system_evaluation_save(
            benchmark=whole,
            system=SAVED.get(name, name),
            figures=system_evaluate(benchmark=whole, result=result),
            result=result,
        )
        try:
            judgement_propose(evaluation=saved, save=False)
            unscored = "some"
        except JudgingError as error:
            unscored = str(error)
        out["whole"][name] = {"f10_strict": saved.figures["f10_strict"], "proposal": unscored}
        print(f"whole benchmark, {name}: {unscored}", flush=True)

    # 2. A share held out: judge each system's unscored top 10 with the replay crowd.
    with tempfile.TemporaryDirectory() as folder:
        held = Path(folder) / "held-out.json.gz"
        count = held_out_copy(Path(args.dev), held, share=args.hold_out, seed=args.seed)
        print(f"held out {count:,} substitutes ({args.hold_out:.0%}, seed {args.seed})", flush=True)
        benchmark = imported("bench-complete-held-out", held)
    judgements = {}
    for name, path in files.items():
        result = result_load(benchmark=benchmark, source=path, keep=True)
        figures = system_evaluate(benchmark=benchmark, result=result)
        saved = system_evaluation_save(
            benchmark=benchmark, system=SAVED.get(name, name), figures=figures, result=result
        )
        for backend in ("mturk", "prolific"):
            priced = judgement_propose(evaluation=saved, backend=backend, save=False)
            out["systems"].setdefault(name, {})[f"cost_{backend}"] = priced.cost
        proposal = judgement_propose(evaluation=saved)
        started = time.perf_counter()
        judgements[name] = judgement_start(judgement=proposal)
        cost = proposal.cost
        paid = {backend: out["systems"][name][f"cost_{backend}"]["total"] for backend in ("mturk", "prolific")}
        out["systems"][name] |= {
            "substitutes": proposal.substitute_count,
            "targets": len(proposal.substitutes),
            "cost_local": cost,
        }
        print(
            f"{name}: {proposal.substitute_count:,} unscored substitutes of {len(proposal.substitutes)} targets; "
            f"{cost['hits']} HITs, {cost['assignments']} assignments; MTurk ${paid['mturk']}, Prolific "
            f"${paid['prolific']}"
            f" (first step; started in {time.perf_counter() - started:.1f} s)",
            flush=True,
        )
    started = time.perf_counter()
    replay = crowd_replay(benchmark=benchmark, path=args.dev, seed=args.seed, workers=30, targets=None)
    print(
        f"replay crowd: {replay.assignments} assignments, {replay.labels} labels, finished={replay.finished} "
        f"{replay.stuck} in {time.perf_counter() - started:.0f} s; cost at ${replay.reward}: ${replay.cost}",
        flush=True,
    )
    out["replay"] = {"assignments": replay.assignments, "labels": replay.labels, "cost": replay.cost}
    for name, judgement in judgements.items():
        done = judgement_report(judgement=judgement)
        if done.report is None:
            print(f"{name}: not every substitute judged", flush=True)
            continue
        values, intervals = done.report["figures"], done.report["intervals"]
        whole_figures = SystemEvaluation.objects.get(
            benchmark__name="bench-complete-whole", system=SAVED.get(name, name)
        ).figures
        out["systems"][name] |= {"figures": values, "intervals": intervals, "whole": whole_figures}
        for setting in SETTINGS:
            low, high = intervals[setting]["f10"]
            print(
                f"{name} {setting:8} F10 {values[setting]['f10']:6.2f} [{low:6.2f}, {high:6.2f}]  "
                f"P10 {values[setting]['p10']:6.2f}  R10 {values[setting]['r10']:6.2f}  "
                f"Fc10 {values[setting]['fc10']:6.2f}  GAP {values[setting]['gap']:6.2f}",
                flush=True,
            )
        print(f"{name} whole benchmark F10 {whole_figures['f10_strict']:6.2f}", flush=True)
        low, high = intervals["complete"]["f10"]
        whole_f10 = whole_figures["f10_strict"]
        figure(
            f"complete F@10 of {name}: the whole benchmark's F@10 outside its interval by",
            max(low - whole_f10, whole_f10 - high, 0.0),
            "points",
            goal=0,
        )
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
