"""The same benchmark for fewer labels (docs/benchmarks.md, "Fewer labels"): the released SWORDS dev
split collected again by the replay crowd under each stopping policy, against the release.

    python -m bench.fewer_labels [--policies adaptive,curtail,swords] [--seed 1] [--targets N]
        [--dev-file ../shared/data/swords-v1.1_dev.json.gz] [--eval-dir ../shared/data/eval-dev]
    python -m bench.fewer_labels --offline [--seeds 1,2]     # the pure simulator alone, no database

Per policy, in its own database (BENCH_DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/crowdlex_bench_fewer, created and migrated if missing): the dev
split is imported without its labels into a benchmark ``fewer-<policy>-s<seed>``, the policy set,
and ``crowd_replay`` collects it through the real claim and submit services (a benchmark that has
finished already is measured again as it stands, so a long run can be measured later). Then, on
FIGURE lines against their goals:

- labels bought (valid labels collected) against the released labels and a flat 10 per candidate;
- F1 of the acceptable (score > 0.5) and conceivable (score > 0) sets against the released decisions;
- Spearman's correlation of the candidates' scores with the released scores;
- each system of ``--eval-dir`` scored by the evaluation service (``system_evaluate``, as
  ``evaluate_system`` does) on the policy's benchmark and on the released one (imported with its
  labels): F@10 lenient and strict and GAP, the largest difference;
- the budget planner's prediction after a pilot of 5 % of the targets (their labels as the
  collection bought them) against the labels the collection then bought for the rest.

``--offline`` replays the release in a pure simulator instead (each candidate's released labels in a
seeded order, rounds as the pipeline buys them, the priors refitted after every round, 25 targets at
a time as the replay's waves), with the rules of ``schemes.swords.stopping``: the adaptive stop's
settings were chosen on the even targets with seed 1 and are reported on the odd targets with seed 2.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench import django_setup, ensure_database, figure

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
DEV_FILE = SHARED / "swords-v1.1_dev.json.gz"
EVAL_DIR = SHARED / "eval-dev"
DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/crowdlex_bench_fewer"
FLAT = 10
PILOT = 0.05
WAVE = 25
# Goals for fewer labels, on the dev split (docs/benchmarks.md, "Fewer labels").
GOAL_ADAPTIVE_SHARE = 75.0  # % of the released labels, at most
GOAL_F1 = 0.98
GOAL_SYSTEM_POINTS = 0.5
GOAL_CURTAIL_SHARE = 84.5
GOAL_PLANNER_ERROR = 10.0
# The released labels' values (SWORDS JSON) as the platform's.
RELEASED_VALUE = {"TRUE": "accept", "FALSE": "reject", "UNSURE": "abstain"}


# ---- the release ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReleasedCandidate:
    target: str
    text: str
    source: str
    labels: tuple[str, ...]

    @property
    def accepts(self) -> int:
        return self.labels.count("accept")


def read_release(path: Path) -> list[ReleasedCandidate]:
    from schemes.swords.stopping import source_key

    with gzip.open(path) as stream:
        release = json.load(stream)
    found = []
    for sid in sorted(release["substitutes"]):
        row = release["substitutes"][sid]
        values = tuple(RELEASED_VALUE[value.split("-")[0]] for value in release["substitute_labels"].get(sid, []))
        found.append(
            ReleasedCandidate(
                row["target_id"], row["substitute"], source_key(row.get("extra", {}).get("sources", [])), values
            )
        )
    return found


def decisions_of(accepts: Sequence[int], labels: Sequence[int]) -> tuple[set[int], set[int]]:
    """Rows acceptable (score > 0.5) and conceivable (score > 0), the platform's decisions (docs/design.md §7)."""
    acceptable = {row for row, (a, n) in enumerate(zip(accepts, labels, strict=True)) if n and a / n > 0.5}
    conceivable = {row for row, a in enumerate(accepts) if a > 0}
    return acceptable, conceivable


def f1(found: set[int], wanted: set[int]) -> float:
    return 2 * len(found & wanted) / (len(found) + len(wanted)) if found or wanted else 1.0


def oracle_gap(release: Sequence[ReleasedCandidate], labels: Sequence[Sequence[str]], rows: Sequence[int]) -> float:
    """The oracle's GAP in percent on ``rows``, scored with each row's ``labels``: per target, the
    oracle ranks the candidates the release scores above 0 by their released score, and the weights
    are the scores of ``labels`` (accepts / (accepts + rejects), abstains left out, as the
    evaluation reads them: docs/design.md §10); the mean over targets with a positive weight. With
    the released labels it is 100; with those a stop bought, what the stop costs a system that
    ranks by the released scores (docs/benchmarks.md, "Fewer labels"). Strings are not lemmatised,
    so it is an estimate of the evaluation's figure."""
    from schemes.swords.evaluation.metrics import gap

    def score(values: Sequence[str]) -> float:
        accepts, rejects = values.count("accept"), values.count("reject")
        return accepts / (accepts + rejects) if accepts + rejects else 0.0

    by_target: dict[str, list[int]] = defaultdict(list)
    for row in rows:
        by_target[release[row].target].append(row)
    found = []
    for chosen in by_target.values():
        released = {row: score(release[row].labels) for row in chosen}
        ranking = [str(row) for row in sorted(chosen, key=lambda row: -released[row]) if released[row] > 0]
        value = gap(ranking, {str(row): score(labels[row]) for row in chosen})
        if value >= 0:
            found.append(value)
    return 100 * sum(found) / len(found) if found else 0.0


# ---- the pure simulator -------------------------------------------------------------------------------


def simulate(
    release: Sequence[ReleasedCandidate],
    *,
    rule_for: Callable[[dict[str, Counter[tuple[int, int]]]], Any],
    first: int,
    seed: int,
    targets: Sequence[str],
) -> tuple[list[int], list[int], list[list[str]]]:
    """Labels drawn and accepts per candidate of ``targets`` under a rule, as the replay draws them:
    each candidate's released labels in a seeded order; a round buys what the rule's ``labels_to_buy``
    asks (``first`` labels first); a candidate whose labels run out stops; the priors are refitted
    from every count so far after each round (``rule_for(table of counts per source)``); targets come
    ``WAVE`` at a time. Returns (labels, accepts, orders) per row of ``release``."""
    rng = random.Random(seed)
    orders = [list(candidate.labels) for candidate in release]
    for order in orders:
        rng.shuffle(order)
    drawn = [0] * len(release)
    accepts = [0] * len(release)
    rows_of: dict[str, list[int]] = defaultdict(list)
    for row, candidate in enumerate(release):
        rows_of[candidate.target].append(row)
    for start in range(0, len(targets), WAVE):
        active = [row for target in targets[start : start + WAVE] for row in rows_of[target]]
        open_rows = set(active)
        while open_rows:
            table: dict[str, Counter[tuple[int, int]]] = defaultdict(Counter)
            for row, candidate in enumerate(release):
                if drawn[row]:
                    table[candidate.source][(accepts[row], drawn[row])] += 1
            rule = rule_for(table)
            buying = {}
            for row in sorted(open_rows):
                if drawn[row] >= len(orders[row]):
                    continue
                wanted = first - drawn[row] if drawn[row] < first else rule(row, accepts[row], drawn[row])
                if wanted:
                    buying[row] = wanted
            open_rows = set(buying)
            for row, wanted in buying.items():
                for value in orders[row][drawn[row] : drawn[row] + wanted]:
                    accepts[row] += value == "accept"
                    drawn[row] += 1
    return drawn, accepts, orders


def offline_rules(release: Sequence[ReleasedCandidate]) -> dict[str, tuple[int, Callable[..., Any]]]:
    """The policies as the pure simulator runs them: (first round, rule factory)."""
    from schemes.swords.settings import SwordsSettings
    from schemes.swords.stopping import (
        ADAPTIVE,
        CURTAIL,
        StoppingRule,
        estimate_mixture,
        estimate_prior,
    )

    settings = SwordsSettings()

    def curtail(table: dict[str, Counter[tuple[int, int]]]) -> Callable[[int, int, int], int]:
        rule = StoppingRule(CURTAIL, maximum=FLAT)
        return lambda row, a, n: rule.labels_to_buy(a, n)

    def swords(table: dict[str, Counter[tuple[int, int]]]) -> Callable[[int, int, int], int]:
        return lambda row, a, n: FLAT - n if a >= settings.pass_min_accepts else 0

    def adaptive(prior: str) -> Callable[[dict[str, Counter[tuple[int, int]]]], Callable[[int, int, int], int]]:
        def make(table: dict[str, Counter[tuple[int, int]]]) -> Callable[[int, int, int], int]:
            if prior == "mixture":
                priors: dict[str, Any] = {source: estimate_mixture(counts) for source, counts in table.items()}
            else:
                priors = {
                    source: estimate_prior((a, n) for (a, n), many in counts.items() for _ in range(many))
                    for source, counts in table.items()
                }
            rule = StoppingRule(
                ADAPTIVE,
                maximum=FLAT,
                epsilon=settings.adaptive_epsilon if prior == "mixture" else 0.005,
                floor=settings.adaptive_floor,
                priors=priors,
                epsilon_conceivable=settings.adaptive_epsilon_conceivable if prior == "mixture" else None,
            )
            return lambda row, a, n: rule.labels_to_buy(a, n, release[row].source)

        return make

    def accepted_to_maximum(table: dict[str, Counter[tuple[int, int]]]) -> Callable[[int, int, int], int]:
        # The adaptive stop, but a candidate with an accept gets every label up to the maximum: its
        # score, and so its rank within its target, as a full collection would have it.
        rule = adaptive("mixture")(table)
        return lambda row, a, n: FLAT - n if a else rule(row, a, n)

    return {
        "swords": (settings.step2_labels, swords),
        "curtail": (settings.step2_labels, curtail),
        "adaptive (beta prior, epsilon 0.005)": (settings.adaptive_floor, adaptive("beta")),
        "adaptive": (settings.adaptive_floor, adaptive("mixture")),
        "adaptive, accepted to the maximum": (settings.adaptive_floor, accepted_to_maximum),
    }


def run_offline(release: Sequence[ReleasedCandidate], *, seeds: Sequence[int]) -> None:
    targets = sorted({candidate.target for candidate in release})
    halves = {"even targets (tuned)": targets[0::2], "odd targets (held out)": targets[1::2]}
    print(f"The pure simulator over the release: {len(release):,} candidates, {len(targets)} targets", flush=True)
    for name, (first, rule_for) in offline_rules(release).items():
        for seed in seeds:
            for half, chosen in halves.items():
                if (seed == seeds[0]) != half.startswith("even") and len(seeds) > 1:
                    continue
                started = time.monotonic()
                drawn, accepts, orders = simulate(release, rule_for=rule_for, first=first, seed=seed, targets=chosen)
                wanted = set(chosen)
                rows = [row for row, candidate in enumerate(release) if candidate.target in wanted]
                released = sum(len(release[row].labels) for row in rows)
                bought = sum(drawn[row] for row in rows)
                found = decisions_of([accepts[row] for row in rows], [drawn[row] for row in rows])
                bought_labels = [order[: drawn[row]] for row, order in enumerate(orders)]
                released_scores = [release[row].accepts / len(release[row].labels) for row in rows]
                scores = [accepts[row] / drawn[row] if drawn[row] else 0.0 for row in rows]
                gold = decisions_of([release[row].accepts for row in rows], [len(release[row].labels) for row in rows])
                print(
                    f"  {name:<38} seed {seed} {half:<22} {100 * bought / released:5.1f} % of the released labels; "
                    f"F1 acceptable {f1(found[0], gold[0]):.3f}, conceivable {f1(found[1], gold[1]):.3f}; Spearman "
                    f"{_spearman(scores, released_scores):.3f}; "
                    f"the oracle's GAP {oracle_gap(release, bought_labels, rows) - 100:+.2f} "
                    f"({time.monotonic() - started:.0f} s)",
                    flush=True,
                )
                if name == "curtail" and half.startswith("odd"):
                    figure(
                        "offline curtail, held-out targets: share of the released labels",
                        100 * bought / released,
                        "%",
                        goal=GOAL_CURTAIL_SHARE,
                    )
                    figure(
                        "offline curtail, held-out targets: the lower F1 of the two sets",
                        min(f1(found[0], gold[0]), f1(found[1], gold[1])),
                        "",
                        goal=1.0,
                        higher_is_better=True,
                    )
                if name == "adaptive" and half.startswith("odd"):
                    figure(
                        "offline adaptive, held-out targets: share of the released labels",
                        100 * bought / released,
                        "%",
                        goal=GOAL_ADAPTIVE_SHARE,
                    )
                    figure(
                        "offline adaptive, held-out targets: acceptable-set F1",
                        f1(found[0], gold[0]),
                        "",
                        goal=GOAL_F1,
                        higher_is_better=True,
                    )
                    figure(
                        "offline adaptive, held-out targets: conceivable-set F1",
                        f1(found[1], gold[1]),
                        "",
                        goal=GOAL_F1,
                        higher_is_better=True,
                    )


# ---- through the real queue ---------------------------------------------------------------------------


def _without_labels(path: Path, folder: Path) -> Path:
    with gzip.open(path) as stream:
        release = json.load(stream)
    release.pop("substitute_labels", None)
    bare = folder / path.name.replace(".json.gz", "-unlabelled.json")
    bare.write_text(json.dumps(release))
    return bare


def _benchmark(name: str, path: Path) -> Any:
    from django.core.management import call_command

    from annotation.models import Benchmark

    found = Benchmark.objects.filter(name=name).first()
    if found is None:
        with open(os.devnull, "w") as quiet:
            call_command("import_benchmark", str(path), benchmark=name, format="swords", stdout=quiet)
        found = Benchmark.objects.get(name=name)
    return found


def _counts(benchmark: Any, release: Sequence[ReleasedCandidate]) -> tuple[list[int], list[int]]:
    """(accepts, valid labels) per row of ``release`` on the benchmark (0 for a candidate without)."""
    from annotation.models import Candidate, normalize_candidate
    from schemes.swords.progress import valid_label_counts

    candidates = Candidate.objects.filter(target__benchmark=benchmark)
    counts = valid_label_counts(candidates)
    # Matched as the replay matches them: the SWORDS target id and the normalised substitute.
    row_of = {(candidate.target, normalize_candidate(candidate.text)): row for row, candidate in enumerate(release)}
    keys = {
        pk: (target, text) for pk, target, text in candidates.values_list("pk", "target__external_id", "normalized")
    }
    accepts, labels = [0] * len(release), [0] * len(release)
    for pk, (_, _, total, accepted) in counts.items():
        row = row_of.get(keys[pk])
        if row is not None:
            accepts[row], labels[row] = accepted, total
    return accepts, labels


def _spearman(first: Sequence[float], second: Sequence[float]) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(first, second).statistic)


def _systems(benchmark: Any, eval_dir: Path) -> dict[str, dict[str, float]]:
    from analysis.services.evaluation import result_load, system_evaluate

    figures = {}
    for path in sorted(eval_dir.glob("*.lsr.json")):
        result = result_load(benchmark=benchmark, source=path)
        system = path.name.removesuffix(".lsr.json").split("_")[-1]
        figures[system] = system_evaluate(benchmark=benchmark, result=result)
    return figures


def planner_forecast(
    release: Sequence[ReleasedCandidate],
    accepts: Sequence[int],
    labels: Sequence[int],
    policy: str,
    settings: Any,
    *,
    mixture: bool = True,
) -> tuple[int, Any, int]:
    """The budget planner's forecast after a pilot of ``PILOT`` of the targets (their labels as the
    collection bought them, a prior per source group fitted to them) of the labels the rest needs,
    its interval under priors refitted to resamples of the pilot's targets, against what the
    collection bought for the rest: (pilot targets, forecast, used)."""
    from analysis import budget
    from analysis.stats import source_group

    targets = sorted({candidate.target for candidate in release})
    pilot = set(random.Random(1).sample(targets, max(1, round(PILOT * len(targets)))))
    in_pilot = np.array([candidate.target in pilot for candidate in release])
    got_accepts, got_labels = np.array(accepts, dtype=np.int64), np.array(labels, dtype=np.int64)
    pilot_accepts, pilot_labels = np.where(in_pilot, got_accepts, 0), np.where(in_pilot, got_labels, 0)
    groups = [source_group(candidate.source.split("+")) for candidate in release]
    target_row = {target: row for row, target in enumerate(targets)}
    units = np.array([target_row[candidate.target] for candidate in release], dtype=np.int64)
    context, _ = budget.plan_context(
        accepts=pilot_accepts, labels=pilot_labels, groups=groups, settings=settings, mixture=mixture, units=units
    )
    forecast = budget.forecast_labels(
        policy=policy,
        accepts=pilot_accepts,
        labels=pilot_labels,
        context=context,
        simulations=200,
        seed=1,
        resamples=200,
    )
    return len(pilot), forecast, int(got_labels[~in_pilot].sum())


def _systems_scored(benchmark: Any, eval_dir: Path, score: str) -> dict[str, dict[str, float]]:
    """The systems' figures on an adaptive benchmark had it chosen ``score`` (``adaptive_score``):
    set for the measurement and put back."""
    kept = dict(benchmark.scheme_settings or {})
    benchmark.scheme_settings = {**kept, "adaptive_score": score}
    benchmark.save(update_fields=["scheme_settings"])
    try:
        return _systems(benchmark, eval_dir)
    finally:
        benchmark.scheme_settings = kept
        benchmark.save(update_fields=["scheme_settings"])


def _print_systems(systems: dict[str, dict[str, float]], released: dict[str, dict[str, float]], label: str) -> float:
    """Each system's F@10 lenient and strict and GAP (and its change from the released benchmark's);
    the largest change."""
    worst = 0.0
    print(f"  systems ({label}):", flush=True)
    for system, figures in systems.items():
        parts = []
        for key in ("f10_lenient", "f10_strict", "gap"):
            delta = figures[key] - released[system][key]
            worst = max(worst, abs(delta))
            parts.append(f"{key} {figures[key]:.2f} ({delta:+.2f})")
        print(f"    {system:<14} " + ", ".join(parts), flush=True)
    return worst


def _planner(
    benchmark: Any, accepts: list[int], labels: list[int], release: Sequence[ReleasedCandidate], policy: str
) -> None:
    """The planner against the replay: context only, since the replay's labels run out where the
    release stops and a real crowd's do not (``run_planner`` measures the goal)."""
    from schemes.swords.settings import settings_of

    pilot, forecast, used = planner_forecast(release, accepts, labels, policy, settings_of(benchmark))
    error = 100 * (forecast.estimate - used) / used if used else 0.0
    print(
        f"  planner after a pilot of {pilot} targets: {forecast.estimate:,} more labels "
        f"[{forecast.low:,}, {forecast.high:,}]; the replay bought {used:,} ({error:+.1f} %; the replay runs out "
        "where the release stops, a real crowd does not: the goal is measured by the crowd that never runs out)",
        flush=True,
    )


def never_running_out(release: Sequence[ReleasedCandidate], *, seed: int) -> list[ReleasedCandidate]:
    """The release as a crowd that never runs out: each candidate keeps its released labels and,
    where the release stopped short of ``FLAT``, gets the rest drawn from its own share of accepts,
    itself drawn from its posterior under its source's mixture prior fitted (``estimate_mixture``)
    to the whole release. (The release stopped a candidate on its counts alone, SWORDS's rule, so
    the likelihood of its counts is that of the labels it has.)"""
    from schemes.swords.stopping import GRID, estimate_mixture

    tables: dict[str, Counter[tuple[int, int]]] = defaultdict(Counter)
    for candidate in release:
        tables[candidate.source][(candidate.accepts, len(candidate.labels))] += 1
    priors = {source: estimate_mixture(table) for source, table in tables.items()}
    rng = random.Random(seed)
    grown = []
    for candidate in release:
        missing = FLAT - len(candidate.labels)
        if missing <= 0:
            grown.append(candidate)
            continue
        weights = priors[candidate.source].posterior(candidate.accepts, len(candidate.labels))
        share = rng.choices(GRID, weights=weights)[0]
        extra = tuple("accept" if rng.random() < share else "reject" for _ in range(missing))
        grown.append(ReleasedCandidate(candidate.target, candidate.text, candidate.source, candidate.labels + extra))
    return grown


def run_planner(release: Sequence[ReleasedCandidate], *, seed: int) -> None:
    """The planner's goal (within ``GOAL_PLANNER_ERROR``) against a collection whose labels never run
    out (``never_running_out``): each policy collects the whole split in the pure simulator, then
    the planner, told only a pilot of 5 % of the targets, forecasts what the rest bought."""
    from schemes.swords.settings import SwordsSettings

    crowd = never_running_out(release, seed=seed)
    targets = sorted({candidate.target for candidate in crowd})
    print(f"\nThe planner against a crowd that never runs out (the release, grown to {FLAT} labels; seed {seed})")
    for name, (first, rule_for) in offline_rules(crowd).items():
        if name not in ("swords", "curtail", "adaptive"):
            continue
        started = time.monotonic()
        drawn, accepts, _ = simulate(crowd, rule_for=rule_for, first=first, seed=seed, targets=targets)
        settings = SwordsSettings(stopping_policy=name)
        pilot, forecast, used = planner_forecast(crowd, accepts, drawn, name, settings)
        error = 100 * (forecast.estimate - used) / used if used else 0.0
        print(
            f"  {name:<8} the crowd bought {sum(drawn):,} labels; after a pilot of {pilot} targets the planner "
            f"forecast {forecast.estimate:,} [{forecast.low:,}, {forecast.high:,}] for the rest, which bought "
            f"{used:,} ({error:+.1f} %; {time.monotonic() - started:.0f} s)",
            flush=True,
        )
        figure(f"{name}: planner after a 5 % pilot, error", abs(error), "%", goal=GOAL_PLANNER_ERROR)


def run_replay(options: argparse.Namespace, release: list[ReleasedCandidate]) -> None:
    import tempfile

    from django.core.management import call_command

    from annotation.models import Target, TargetStage
    from hits.services import benchmark_settings_update
    from review.replay import crowd_replay
    from schemes.swords.settings import settings_of

    call_command("migrate", verbosity=0)
    released_accepts = [candidate.accepts for candidate in release]
    released_labels = [len(candidate.labels) for candidate in release]
    gold_acceptable, gold_conceivable = decisions_of(released_accepts, released_labels)
    with tempfile.TemporaryDirectory() as folder:
        bare = _without_labels(options.dev_file, Path(folder))
        reference = _benchmark("fewer-released", options.dev_file)
        released_systems = _systems(reference, options.eval_dir)
        for policy in options.policies:
            name = f"fewer-{policy}-s{options.seed}" + (f"-{options.targets}" if options.targets else "")
            if options.measure:
                name = options.measure
            benchmark = _benchmark(name, bare)
            if options.measure:
                # A benchmark measured as it stands: its own policy.
                policy = settings_of(benchmark).stopping_policy
            print(f"\n{policy}: benchmark {name}", flush=True)
            if not benchmark.extra.get("simulated") and not options.measure:
                benchmark_settings_update(benchmark=benchmark, scheme_settings={"stopping_policy": policy})
                cpu = time.process_time()
                report = crowd_replay(
                    benchmark=benchmark, path=options.dev_file, seed=options.seed, targets=options.targets
                )
                print(
                    f"  replayed {report.targets_done}/{report.targets} targets in {report.seconds:.0f} s "
                    f"({time.process_time() - cpu:.0f} s of this process's CPU): drawn {report.labels_drawn:,}, "
                    f"beyond the release {report.labels_beyond_release:,}",
                    flush=True,
                )
            accepts, labels = _counts(benchmark, release)
            done = set(
                Target.objects.filter(benchmark=benchmark, stage=TargetStage.DONE).values_list("external_id", flat=True)
            )
            rows = [row for row, candidate in enumerate(release) if candidate.target in done]
            partial = len(done) < len({candidate.target for candidate in release})
            print(f"  measured on its {len(done)} finished targets", flush=True)
            wanted = set(rows)
            released = sum(released_labels[row] for row in rows)
            bought = sum(labels[row] for row in rows)
            share = 100 * bought / released
            # Labels a candidate was asked for beyond its release were drawn again from it (review.replay).
            within = sum(min(labels[row], released_labels[row]) for row in rows)
            print(
                f"  of which within the release {within:,} ({100 * within / released:.1f} %), "
                f"asked beyond it {bought - within:,}",
                flush=True,
            )
            print(
                f"  labels bought {bought:,}: {share:.1f} % of the released {released:,}, "
                f"{100 * bought / (FLAT * len(rows)):.1f} % of a flat {FLAT} per candidate",
                flush=True,
            )
            found_acceptable, found_conceivable = decisions_of(accepts, labels)
            acceptable = f1(found_acceptable & wanted, gold_acceptable & wanted)
            conceivable = f1(found_conceivable & wanted, gold_conceivable & wanted)
            scores = [accepts[row] / labels[row] if labels[row] else 0.0 for row in rows]
            gold_scores = [released_accepts[row] / released_labels[row] for row in rows]
            if policy in ("adaptive", "curtail"):
                figure(
                    f"{policy}: labels bought, share of the released",
                    share,
                    "%",
                    goal=GOAL_ADAPTIVE_SHARE if policy == "adaptive" else GOAL_CURTAIL_SHARE,
                )
                for name, value in (("acceptable", acceptable), ("conceivable", conceivable)):
                    figure(
                        f"{policy}: {name}-set F1 against the release",
                        value,
                        "",
                        goal=GOAL_F1 if policy == "adaptive" else 1.0,
                        higher_is_better=True,
                    )
            else:
                # The release's own rule, drawn in another order: context, no goal.
                print(
                    f"  F1 against the release: acceptable {acceptable:.4f}, conceivable {conceivable:.4f}", flush=True
                )
            print(f"  Spearman of scores with the released: {_spearman(scores, gold_scores):.4f}", flush=True)
            if not partial:
                chosen = settings_of(benchmark)
                if policy == "adaptive":
                    # Context: the published score, which an adaptive benchmark may choose instead.
                    scored_as = chosen.adaptive_score
                    other = "published" if scored_as != "published" else "expected"
                    _print_systems(
                        _systems_scored(benchmark, options.eval_dir, other), released_systems, f"{other} score"
                    )
                    label = f"{scored_as} score, evaluated"
                else:
                    label = "published score"
                worst = _print_systems(_systems(benchmark, options.eval_dir), released_systems, label)
                if policy in ("adaptive", "curtail"):
                    figure(
                        f"{policy}: largest change of a system's F@10 or GAP", worst, "points", goal=GOAL_SYSTEM_POINTS
                    )
                _planner(benchmark, accepts, labels, release, policy)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--policies", default="adaptive,curtail,swords")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--targets", type=int, default=None, help="replay only the first N targets")
    parser.add_argument("--dev-file", type=Path, default=DEV_FILE)
    parser.add_argument("--eval-dir", type=Path, default=EVAL_DIR)
    parser.add_argument("--database", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL))
    parser.add_argument("--offline", action="store_true", help="the pure simulator alone")
    parser.add_argument(
        "--measure", default=None, help="measure this benchmark as it stands (its finished targets), replay nothing"
    )
    parser.add_argument("--seeds", default="1,2", help="seeds of the pure simulator: tuned on the first")
    options = parser.parse_args()
    options.policies = [policy for policy in options.policies.split(",") if policy]
    if options.measure:
        options.policies = options.policies[:1]
    if not options.dev_file.exists():
        print(f"  {options.dev_file} not found: nothing to measure", flush=True)
        return
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crowdlex.settings")
    os.environ.setdefault("DEBUG", "1")
    if options.offline:
        django_setup()
        release = read_release(options.dev_file)
        seeds = [int(seed) for seed in options.seeds.split(",")]
        run_offline(release, seeds=seeds)
        run_planner(release, seed=seeds[0])
        return
    os.environ["DATABASE_URL"] = options.database
    ensure_database(options.database)
    django_setup()
    run_replay(options, read_release(options.dev_file))


if __name__ == "__main__":
    main()
