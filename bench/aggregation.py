"""Worker-aware aggregation and the budget planner, without a database.

1. Dawid-Skene and MACE (``analysis.aggregation``) on synthetic crowds of the dev file's size, of
   full SWORDS and of ten times it (workers of accuracies between 0.6 and 0.98, a tenth of the
   candidates acceptable, labels grouped by candidate as ``label_arrays`` gives them): iterations,
   seconds and numpy's peak memory (tracemalloc) of each fit. Goal: under 300 MB at ten times.
2. The budget planner on the released SWORDS dev file, as the platform plans a new SWORDS benchmark
   (``analysis.services.budget.budget_plan``: the scheme's default settings and stopping policy,
   the priors of ``analysis.budget.plan_context``): a pilot of a share of its targets keeps their
   released labels, the rest are unlabelled; the plan's labels for the swords rule against the
   released labels of the rest. A forecast's error depends on the targets the pilot drew, so
   ``--pilots`` pilots are drawn (one per seed) and the figure is the median of their absolute
   errors. Goal: within 10 %. Django is set up for the scheme's rules; no database is read.

The floor of a fit, measured beside it: the passes over the labels that no expectation-maximisation
fit can skip, with nothing else. Each iteration reads every label twice (the expectation step sums
the evidence per candidate, the maximisation step sums per worker): the floor is a sum of the
labels per candidate and one per worker in plain numpy, times the iterations the fit took. Goal:
each fit within 3 times its floor (the methods keep richer models: a confusion matrix per worker,
MACE's spamming parameters, and the logarithms and exponentials of each step).

    python -m bench.aggregation [--sizes dev,full,10x] [--dev-file ../shared/data/swords-v1.1_dev.json.gz]
        [--pilot 0.05] [--seed 1] [--pilots 6] [--simulations 200] [--resamples 200]
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from analysis import aggregation, budget
from analysis.stats import source_group
from bench import django_setup, figure
from bench.floor import machine, ratio_figure

GOAL_FLOOR_RATIO = 3.0
# A 90 % interval holds the truth in about nine pilots of ten: in at least two of three (4 of 6),
# short of which a pilot's interval is narrower than what it knows.
GOAL_COVERAGE = 66.0

# (candidates, labels) of the SWORDS dev file, full SWORDS and ten times it (docs/benchmarks.md).
SIZES = {"dev": (22_978, 121_938), "full": (68_683, 375_855), "10x": (686_830, 3_758_550)}
DEV_FILE = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "swords-v1.1_dev.json.gz"


def synthetic_votes(candidates: int, labels: int, *, workers: int = 300, seed: int = 0) -> aggregation.Votes:
    rng = np.random.default_rng(seed)
    accuracy = rng.uniform(0.6, 0.98, workers)
    truth = rng.random(candidates) < 0.1
    item = np.sort(rng.integers(0, candidates, labels)).astype(np.int32)
    worker = rng.integers(0, workers, labels).astype(np.int32)
    right = rng.random(labels) < accuracy[worker]
    accept = np.where(right, truth[item], ~truth[item])
    return aggregation.Votes(
        item=item,
        worker=worker,
        accept=accept,
        truth=np.full(candidates, aggregation.UNKNOWN, dtype=np.int64),
        n_workers=workers,
    )


def measure_fits(sizes: list[str]) -> None:
    for size in sizes:
        candidates, labels = SIZES[size]
        votes = synthetic_votes(candidates, labels)
        for method in aggregation.METHODS:
            tracemalloc.start()
            started = time.process_time()
            fit = aggregation.aggregate(votes, method=method)
            seconds = time.process_time() - started
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            print(
                f"  {size:<5} {method:<12} {fit.iterations:>5} iterations  {seconds:7.2f} s CPU  "
                f"peak {peak / 1e6:6.1f} MB beside the labels  converged {fit.converged}",
                flush=True,
            )
            floor = em_floor(votes, fit.iterations)
            ratio_figure(
                f"{method} at {size} size",
                seconds,
                floor,
                goal=GOAL_FLOOR_RATIO,
                context=f"{seconds:.2f} s of CPU for {fit.iterations} iterations; the same passes over the labels "
                f"{floor:.2f} s; {machine()}",
            )
            if size == "10x":
                figure(f"{method} at ten times SWORDS, numpy's peak beside the labels", peak / 1e6, "MB", goal=300)


def em_floor(votes: aggregation.Votes, iterations: int) -> float:
    """CPU seconds of ``iterations`` times the two sums over the labels that every iteration of an
    expectation-maximisation fit needs, in plain numpy: the floor of a fit (module docstring)."""
    candidates = votes.truth.size
    # The labels come grouped by candidate (as ``label_arrays`` gives them): sums per candidate
    # are one reduction over the runs.
    starts = np.flatnonzero(np.r_[True, votes.item[1:] != votes.item[:-1]])
    weights = np.where(votes.accept, 0.9, 0.1)
    started = time.process_time()
    for _ in range(max(1, iterations)):
        per_candidate = np.add.reduceat(weights, starts)
        per_worker = np.bincount(votes.worker, weights=weights, minlength=votes.n_workers)
    del per_candidate, per_worker, candidates
    return time.process_time() - started


@dataclass(frozen=True)
class ReleasePlan:
    """The planner after a pilot of the release: what it forecasts for the rest, what the release used."""

    policy: str
    pilot_targets: int
    targets: int
    pilot_labels: int
    forecast: budget.LabelForecast
    used: int

    @property
    def error(self) -> float:
        """The forecast's error against the labels the release used, in % of them."""
        return 100 * (self.forecast.estimate - self.used) / self.used


def plan_release(release: dict[str, Any], *, pilot: float, seed: int, simulations: int, resamples: int) -> ReleasePlan:
    """The budget planner as a new SWORDS benchmark runs it (``analysis.services.budget.budget_plan``:
    the scheme's default settings and stopping policy, ``budget.plan_context``'s priors per source
    group) on a release of which a pilot share of the targets keeps its labels and the rest has
    none. Needs Django set up (the SWORDS scheme registers its stopping rules), not a database."""
    from schemes.swords.settings import SwordsSettings

    settings = SwordsSettings()
    substitutes = release["substitutes"]
    ids = sorted(substitutes)
    target_ids = sorted(release["targets"])
    target_row = {target: row for row, target in enumerate(target_ids)}
    candidate_target = np.array([target_row[substitutes[sid]["target_id"]] for sid in ids])
    released = [release["substitute_labels"].get(sid, []) for sid in ids]
    labels = np.array([len(values) for values in released], dtype=np.int64)
    accepts = np.array([sum(value.startswith("TRUE") for value in values) for values in released], dtype=np.int64)
    groups = [source_group(substitutes[sid].get("extra", {}).get("sources", [])) for sid in ids]

    rng = np.random.default_rng(seed)
    chosen = rng.choice(len(target_ids), size=max(1, round(pilot * len(target_ids))), replace=False)
    in_pilot = np.isin(candidate_target, chosen)
    pilot_labels = np.where(in_pilot, labels, 0)
    pilot_accepts = np.where(in_pilot, accepts, 0)
    context, _ = budget.plan_context(
        accepts=pilot_accepts, labels=pilot_labels, groups=groups, settings=settings, units=candidate_target
    )
    forecast = budget.forecast_labels(
        policy=settings.stopping_policy,
        accepts=pilot_accepts,
        labels=pilot_labels,
        context=context,
        simulations=simulations,
        seed=seed,
        resamples=resamples,
    )
    return ReleasePlan(
        policy=settings.stopping_policy,
        pilot_targets=int(chosen.size),
        targets=len(target_ids),
        pilot_labels=int(pilot_labels.sum()),
        forecast=forecast,
        used=int(labels[~in_pilot].sum()),
    )


def plan_against_release(path: Path, *, pilot: float, seeds: range, simulations: int, resamples: int) -> None:
    """The planner after several pilots of the release, one per seed: a forecast's error depends on
    which targets the pilot drew, so the figure is the median of the pilots' absolute errors, each
    pilot printed with its forecast's interval; and how many of the intervals hold what the release
    used (a 90 % interval should hold about nine in ten), and the CPU seconds of a plan."""
    with gzip.open(path) as file:
        release = json.load(file)
    errors = []
    inside = 0
    seconds = []
    policy = ""
    for seed in seeds:
        started = time.process_time()
        plan = plan_release(release, pilot=pilot, seed=seed, simulations=simulations, resamples=resamples)
        seconds.append(time.process_time() - started)
        forecast = plan.forecast
        held = forecast.low <= plan.used <= forecast.high
        inside += held
        print(
            f"  pilot {seed}: {plan.pilot_targets} of {plan.targets} targets ({plan.pilot_labels} labels): the "
            f"{plan.policy} rule needs {forecast.estimate} more labels [{forecast.low}, {forecast.high}]; the release "
            f"used {plan.used} ({'inside' if held else 'outside'} the interval), error {plan.error:+.1f} %; "
            f"{seconds[-1]:.1f} s CPU",
            flush=True,
        )
        errors.append(abs(plan.error))
        policy = plan.policy
    print(f"  absolute error over {len(errors)} pilots: median {np.median(errors):.1f} %, worst {max(errors):.1f} %")
    figure(
        f"planner ({policy}) on the released dev file after a {pilot:.0%} pilot, median error of {len(errors)} pilots",
        float(np.median(errors)),
        "%",
        goal=10,
    )
    print(
        f"  the 90 % interval ({simulations} simulations for the estimate, {resamples} resamples of the pilot for "
        f"the interval) held the release's count in {inside} of {len(errors)} pilots; a plan took "
        f"{np.median(seconds):.1f} s CPU (median; {machine()})"
    )
    figure(
        f"planner ({policy}) on the released dev file, pilots whose 90 % interval holds the release's count",
        100 * inside / len(errors),
        "%",
        goal=GOAL_COVERAGE,
        higher_is_better=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="dev,full,10x", help="comma-separated of: " + ", ".join(SIZES))
    parser.add_argument("--dev-file", type=Path, default=DEV_FILE, help="the released SWORDS dev file")
    parser.add_argument("--pilot", type=float, default=0.05, help="share of targets labelled in the pilot")
    parser.add_argument("--seed", type=int, default=1, help="the first pilot's seed (default 1)")
    parser.add_argument("--pilots", type=int, default=6, help="pilots drawn, one per seed from --seed (default 6)")
    parser.add_argument("--simulations", type=int, default=200, help="simulations for the estimate (default 200)")
    parser.add_argument(
        "--resamples", type=int, default=200, help="resamples of the pilot for the interval (default 200; 0: none)"
    )
    options = parser.parse_args()
    print("Dawid-Skene and MACE on synthetic crowds", flush=True)
    measure_fits([size for size in options.sizes.split(",") if size])
    if options.dev_file.exists():
        print("The budget planner against the released dev file", flush=True)
        django_setup()
        plan_against_release(
            options.dev_file,
            pilot=options.pilot,
            seeds=range(options.seed, options.seed + options.pilots),
            simulations=options.simulations,
            resamples=options.resamples,
        )
    else:
        print(f"  {options.dev_file} not found: the planner's check is skipped", flush=True)


if __name__ == "__main__":
    main()
