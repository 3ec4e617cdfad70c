"""What a SWORDS benchmark already has, per candidate: the one reading the pipeline's advancement,
its progress pages and HIT generation all start from, so they never disagree about what is missing."""

from __future__ import annotations

import json
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Count, Max, Q, QuerySet, TextField
from django.db.models.functions import Cast

from annotation.models import (
    Benchmark,
    BenchmarkChanges,
    Candidate,
    CandidateStage,
    CandidateTally,
    Label,
    Target,
    TargetStage,
)
from annotation.selectors import valid_labels
from crowdlex.dialect import dialect
from crowdlex.statements import shaped_rows
from schemes.base import REPLAY_LABELS_LEFT
from schemes.progress import CollectedWork, ProgressTable, SchemeProgress, StageMoves, StepCount, TargetCount
from schemes.swords.items import ACCEPT
from schemes.swords.pipeline import CandidateProgress, candidate_complete, labels_missing, refresh_moves
from schemes.swords.settings import SwordsSettings
from schemes.swords.stopping import (
    ADAPTIVE,
    CURTAIL,
    DEFAULT_PRIOR,
    MIXTURE_PRIOR,
    AnyPrior,
    StoppingRule,
    estimate_mixture,
    estimate_prior,
    expected_counts,
    source_key,
    weighted_counts,
)

# ``adaptive_score``'s choice that scores a candidate as expected with the design's maximum of labels.
EXPECTED_SCORE = "expected"

# The candidates a step judges: step 2 reduces fresh candidates, step 3 scores the survivors.
STEP_CANDIDATE_STAGE = {2: CandidateStage.REDUCE, 3: CandidateStage.SCORE}


def valid_label_counts(candidates: QuerySet[Candidate]) -> dict[int, tuple[int, int, int, int]]:
    """Per candidate of ``candidates`` with any valid label: its valid labels in step 2, its step-2
    accepts, its valid labels in all steps and its accepts among them (a candidate without one is
    absent: all four are 0). Read from the candidates' tallies (docs/design.md §7, "Tallies"), one
    row each, rather than grouped from every label."""
    return {
        candidate_id: (step2, step2_accepts, total, accepts)
        for candidate_id, step2, step2_accepts, total, accepts in CandidateTally.objects.filter(
            candidate__in=candidates.values("pk"), labels__gt=0
        ).values_list("candidate_id", "step2_labels", "step2_accepts", "labels", "accepts")
    }


# Reliability per worker by aggregation method (docs/design.md §13): the method's fit over the
# benchmark's valid labels, controls as known answers. Registered by the SWORDS figures plug-in, which
# sits in the analysis room where the fits live: {worker id: reliability}, and the labels without a
# worker's (None when there are none).
Reliability = Callable[[Benchmark], tuple[dict[int, float], float | None]]
RELIABILITY: dict[str, Reliability] = {}


def register_reliability(method: str, reliability: Reliability) -> None:
    RELIABILITY[method] = reliability


def evidence_counts(*, benchmark: Benchmark, method: str) -> dict[int, tuple[int, int]]:
    """The (accepts, labels) an adaptive stop reads of each candidate still in the rounds, weighed by
    its workers' reliability under ``method`` (``stopping.weighted_counts``); empty for ``counts``,
    where the rule reads the raw counts."""
    if method == "counts":
        return {}
    if method not in RELIABILITY:
        raise ValueError(f"no worker reliability for {method!r}; known: {', '.join(sorted(RELIABILITY))}")
    by_worker, workerless = RELIABILITY[method](benchmark)
    labels: dict[int, list[tuple[bool, float]]] = defaultdict(list)
    rows = (
        valid_labels()
        .filter(
            candidate__target__benchmark=benchmark,
            candidate__stage__in=[CandidateStage.REDUCE, CandidateStage.SCORE],
        )
        .values_list("candidate_id", "worker_id", "value")
    )
    for candidate_id, worker_id, value in rows:
        weight = by_worker.get(worker_id, 1.0) if worker_id is not None else (1.0 if workerless is None else workerless)
        labels[candidate_id].append((value == ACCEPT, weight))
    return {candidate_id: weighted_counts(values) for candidate_id, values in labels.items()}


def _target_count_tables(
    *, benchmark: Benchmark, target_ids: Sequence[int] | None
) -> dict[int, Counter[tuple[str, int, int]]]:
    """Per target (every target of the benchmark when ``target_ids`` is None): how many of its
    candidates have each (prior key, accepts, valid labels), among those with a valid label and not
    excluded. One grouped statement whose rows are the distinct (target, sources, labels, accepts)."""
    labels = valid_labels().filter(candidate__target__benchmark=benchmark)
    if target_ids is not None:
        labels = labels.filter(candidate__target_id__in=sorted(target_ids))
    per_candidate = (
        labels.exclude(candidate__stage=CandidateStage.EXCLUDED)
        .values("candidate_id")
        .annotate(total=Count("pk"), accepts=Count("pk", filter=Q(value=ACCEPT)))
        .values("candidate_id", "total", "accepts")
        .order_by()
    )
    inner, params = per_candidate.query.sql_with_params()
    table = Candidate._meta.db_table
    sql = (
        f"SELECT c.target_id, c.sources, counted.total, counted.accepts, COUNT(*) FROM ({inner}) counted "
        f"JOIN {table} c ON c.id = counted.candidate_id GROUP BY c.target_id, c.sources, counted.total, counted.accepts"
    )
    result: dict[int, Counter[tuple[str, int, int]]] = {pk: Counter() for pk in target_ids or ()}
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for target_id, sources, total, accepts, many in cursor.fetchall():
            # PostgreSQL hands jsonb over decoded; SQLite as its text.
            value = json.loads(sources) if isinstance(sources, str) else sources
            result.setdefault(target_id, Counter())[(source_key(value or []), int(accepts), int(total))] += int(many)
    return result


def _by_source(tables: Iterable[Counter[tuple[str, int, int]]]) -> dict[str, Counter[tuple[int, int]]]:
    result: dict[str, Counter[tuple[int, int]]] = defaultdict(Counter)
    for table in tables:
        for (source, accepts, total), many in table.items():
            result[source][(accepts, total)] += many
    return result


@dataclass
class _CountStore:
    """One benchmark's count table kept between refreshes (docs/design.md §13): per target, how many
    candidates have each (prior key, accepts, labels); exact as of the benchmark's change counter
    ``stamp`` (``BenchmarkChanges.changes``), but for labels above ``label_mark``. ``awaiting``: the
    transaction of a refresh that brought it up to date and whose counter has not moved yet."""

    stamp: int
    label_mark: int
    by_target: dict[int, Counter[tuple[str, int, int]]]
    awaiting: int | None = None


# Count tables kept by this process, by benchmark id: a cache that is only ever read where its
# stamp proves it current (``source_count_table``), so a stale or lost one costs a recount, never a
# wrong prior.
_COUNT_STORES: dict[int, _CountStore] = {}
_COUNT_LOCK = threading.Lock()
# New labels read at a time when a table is brought up to date (all of them are read, page by page).
NEW_LABELS_PAGE = 5000


def _change_state(benchmark_id: int) -> tuple[int, int | None]:
    """The benchmark's change counter and the current transaction's id when it has written anything
    (None outside PostgreSQL or in a transaction that only reads); one statement."""
    table = BenchmarkChanges._meta.db_table
    return dialect().counter_with_transaction(f"SELECT changes FROM {table} WHERE benchmark_id = %s", [benchmark_id])


def _in_progress(txid: int | None) -> bool:
    return txid is not None and dialect().transaction_in_progress(txid)


def _labels_since(*, benchmark: Benchmark, mark: int) -> tuple[set[int], int]:
    """The targets of the benchmark's labels with an id above ``mark``, and the highest such id.

    Two statements, each on a primary key: the labels above the mark (of any benchmark: a range of
    the label index, the few written since the last refresh), then their candidates' targets."""
    rows: list[tuple[int, int]] = []
    while True:
        # In pages ordered by id: a walk of the primary key's index whatever the table's statistics
        # say (a stale estimate of "id > mark" would otherwise scan the whole table).
        page = list(
            Label.objects.filter(pk__gt=rows[-1][0] if rows else mark)
            .order_by("pk")
            .values_list("pk", "candidate_id")[:NEW_LABELS_PAGE]
        )
        rows += page
        if len(page) < NEW_LABELS_PAGE:
            break
    if not rows:
        return set(), mark
    candidates = sorted({candidate_id for _, candidate_id in rows})
    ours = dict(Candidate.objects.filter(pk__in=candidates, target__benchmark=benchmark).values_list("pk", "target_id"))
    # Past every label read, ours or not: those of other benchmarks are never read again.
    return set(ours.values()), max(pk for pk, _ in rows)


def _highest_label(benchmark: Benchmark) -> int:
    highest = Label.objects.filter(candidate__target__benchmark=benchmark).aggregate(highest=Max("pk"))["highest"]
    return int(highest or 0)


def source_count_table(
    *, benchmark: Benchmark, touched: Sequence[int] | None = (), refreshing: bool = False
) -> dict[str, Counter[tuple[int, int]]]:
    """Per prior key (``stopping.source_key``): how many candidates have each (accepts, valid labels),
    among the benchmark's candidates with a valid label (excluded ones left out).

    Kept between refreshes (docs/design.md §13) rather than read from every label each time: what
    changes the counts without moving the benchmark's change counter is new labels (submits) and,
    inside a refresh, the filtering it flips on the targets it advances. So a table current at the
    counter is brought up to date by recounting only the targets of ``touched`` (the refresh's
    targets) and those of labels newer than it had seen; ``touched`` None (a whole refresh) or a
    counter moved by anything else (imports, exclusions, whole refreshes elsewhere) recounts the
    whole benchmark. ``refreshing``: called by a refresh's advancement, whose counter moves when it
    ends (``count_table_refreshed``). On PostgreSQL only, where a counter never takes a value twice;
    elsewhere every call recounts.
    """
    changes, txid = _change_state(benchmark.pk)
    with _COUNT_LOCK:
        store = _COUNT_STORES.get(benchmark.pk)
    if store is not None and store.awaiting not in (None, txid) and not _in_progress(store.awaiting):
        # Its refresh ended without moving the counter (it failed, and rolled back): recount.
        store = None
    current = (
        store is not None
        and txid is not None
        and touched is not None
        and store.stamp == changes
        and store.awaiting in (None, txid)
    )
    if store is not None and current:
        recount, mark = _labels_since(benchmark=benchmark, mark=store.label_mark)
        recount.update(touched or ())
        by_target = dict(store.by_target)
        if recount:
            by_target.update(_target_count_tables(benchmark=benchmark, target_ids=sorted(recount)))
    else:
        mark = _highest_label(benchmark)
        by_target = _target_count_tables(benchmark=benchmark, target_ids=None)
    if txid is not None and (store is None or store.awaiting in (None, txid)):
        # Kept by a transaction that writes (a refresh, a batch): one that only reads may see a store
        # whose refresh has not committed, and leaves it alone.
        kept = _CountStore(stamp=changes, label_mark=mark, by_target=by_target, awaiting=txid if refreshing else None)
        if store is not None and store.awaiting == txid and not refreshing:
            kept.awaiting = txid
        with _COUNT_LOCK:
            _COUNT_STORES[benchmark.pk] = kept
    return _by_source(by_target.values())


def count_table_refreshed(*, benchmark: Benchmark) -> None:
    """Called by a refresh once it moved the benchmark's change counter: a table it brought up to date
    is current at the new counter; any other table of the benchmark is dropped (recounted when next
    needed), since the refresh may have flipped filtering it did not count."""
    changes, txid = _change_state(benchmark.pk)
    with _COUNT_LOCK:
        store = _COUNT_STORES.get(benchmark.pk)
        if store is None:
            return
        if txid is not None and store.awaiting == txid:
            store.stamp, store.awaiting = changes, None
        else:
            del _COUNT_STORES[benchmark.pk]


def stopping_rule(
    *, benchmark: Benchmark, settings: SwordsSettings, touched: Sequence[int] | None = (), refreshing: bool = False
) -> StoppingRule | None:
    """The benchmark's stopping rule (docs/design.md §13), None under the swords policy.

    The adaptive rule's prior per candidate source is fitted (``stopping.estimate_mixture``, or
    ``estimate_prior`` for the beta prior) to the benchmark's valid labels as they stand, so it
    sharpens as labels arrive. Under ``adaptive_evidence`` other than counts, the rule reads each
    undecided candidate's labels weighed by their workers' reliability (``stopping.weighted_counts``).
    ``touched`` and ``refreshing``: what ``source_count_table`` recounts.
    """
    maximum = settings.total_labels
    if settings.stopping_policy == CURTAIL:
        return StoppingRule(CURTAIL, maximum=maximum, available=REPLAY_LABELS_LEFT.get() or {})
    if settings.stopping_policy != ADAPTIVE:
        return None
    tables = source_count_table(benchmark=benchmark, touched=touched, refreshing=refreshing)
    priors = {source: _fitted_prior(settings.adaptive_prior, table) for source, table in tables.items()}
    return StoppingRule(
        ADAPTIVE,
        maximum=maximum,
        epsilon=settings.adaptive_epsilon,
        floor=settings.adaptive_floor,
        priors=priors,
        epsilon_conceivable=settings.adaptive_epsilon_conceivable if settings.adaptive_prior == MIXTURE_PRIOR else None,
        evidence=evidence_counts(benchmark=benchmark, method=settings.adaptive_evidence),
        available=REPLAY_LABELS_LEFT.get() or {},
    )


# Priors fitted by kind and table: the table of a source changes with a few candidates per refresh,
# and many refreshes leave a source's as it was.
_FITTED: dict[tuple[str, frozenset[tuple[tuple[int, int], int]]], AnyPrior] = {}
FITTED_KEPT = 256


def _fitted_prior(kind: str, table: Counter[tuple[int, int]]) -> AnyPrior:
    key = (kind, frozenset(table.items()))
    found = _FITTED.get(key)
    if found is None:
        if kind == MIXTURE_PRIOR:
            found = estimate_mixture(table)
        else:
            found = estimate_prior((a, n) for (a, n), many in table.items() for _ in range(many))
        if len(_FITTED) >= FITTED_KEPT:
            _FITTED.clear()
        _FITTED[key] = found
    return found


def score_priors(*, settings: SwordsSettings, rows: Iterable[tuple[str, int, int]]) -> dict[str, AnyPrior] | None:
    """The priors per source an adaptive benchmark's expected score reads, fitted as the stop fits
    them to candidates' (prior key, accepts, valid labels); None where the published score is read
    (any other policy, or ``adaptive_score`` published)."""
    if settings.stopping_policy != ADAPTIVE or settings.adaptive_score != EXPECTED_SCORE:
        return None
    tables: dict[str, Counter[tuple[int, int]]] = defaultdict(Counter)
    for source, accepts, labels in rows:
        if labels:
            tables[source][(accepts, labels)] += 1
    return {source: _fitted_prior(settings.adaptive_prior, table) for source, table in tables.items()}


def evaluated_counts(
    *,
    settings: SwordsSettings,
    priors: dict[str, AnyPrior] | None,
    source: str,
    accepts: int,
    rejects: int,
    labels: int,
) -> tuple[float, float]:
    """The (accepts, rejects) the evaluation and the exports score a candidate with (docs/design.md
    §13, "The score of a stopped candidate"): the published counts, or with ``priors``
    (``score_priors``) those expected with the design's maximum of labels (``stopping.expected_counts``)
    for a candidate with an accept. One without keeps its score of 0, as SWORDS scores a candidate
    its step 2 dropped: its stop decided it inconceivable, and GAP gives it no weight."""
    if priors is None or not labels or not accepts:
        return float(accepts), float(rejects)
    return expected_counts(
        accepts, rejects, labels, maximum=settings.total_labels, prior=priors.get(source, DEFAULT_PRIOR)
    )


def _candidates_of(benchmark_id: int, target_ids: list[int] | None) -> QuerySet[Candidate]:
    candidates = Candidate.objects.filter(target__benchmark_id=benchmark_id)
    return candidates if target_ids is None else candidates.filter(target_id__in=target_ids)


def _tally_rows(benchmark_id: int, target_ids: list[int] | None) -> QuerySet[CandidateTally, tuple[int, ...]]:
    # ``valid_label_counts`` of the candidates.
    return CandidateTally.objects.filter(
        candidate__in=_candidates_of(benchmark_id, target_ids).values("pk"), labels__gt=0
    ).values_list("candidate_id", "step2_labels", "step2_accepts", "labels", "accepts")


def _candidate_rows(benchmark_id: int, target_ids: list[int] | None) -> QuerySet[Candidate, tuple[Any, ...]]:
    return (
        _candidates_of(benchmark_id, target_ids)
        .annotate(sources_text=Cast("sources", TextField()))
        .values_list("pk", "target_id", "stage", "sources_text")
        .order_by("target_id", "pk")
    )


def candidate_progress(
    *, benchmark: Benchmark, target_ids: list[int] | None = None
) -> dict[int, list[CandidateProgress]]:
    """Per target: each candidate's stage and its valid labels (step 2, step-2 accepts, all steps).

    The one reading of what the benchmark already has: the pipeline's advancement and progress
    pages and HIT generation (``valid_label_counts``) all start from it, so they never disagree
    about what is missing.
    """
    # The statements built by the ORM once per process (``crowdlex.statements.shaped_rows``): every
    # submit's first reader reads them for its targets.
    counts = {
        candidate_id: (step2, step2_accepts, total, accepts)
        for candidate_id, step2, step2_accepts, total, accepts in shaped_rows(_tally_rows, benchmark.pk, target_ids)
    }
    result: dict[int, list[CandidateProgress]] = defaultdict(list)
    # The sources read as their JSON text and keyed once per distinct text: a benchmark's candidates
    # share a handful of source sets, and decoding each candidate's list was most of this reading's
    # time at ten times the SWORDS test split (docs/benchmarks.md, "Researcher pages": the warm task).
    rows = shaped_rows(_candidate_rows, benchmark.pk, target_ids)
    keys: dict[str | None, str] = {}
    empty = (0, 0, 0, 0)
    for pk, target_id, stage, sources_text in rows:
        source = keys.get(sources_text)
        if source is None:
            source = keys[sources_text] = _sources_key(sources_text)
        # Positional, in the order of CandidateProgress's fields: (id, stage, step-2 valid, step-2
        # accepts, valid in all, accepts in all, source).
        result[target_id].append(CandidateProgress(pk, stage, *counts.get(pk, empty), source))
    return result


def _sources_key(sources_text: str | None) -> str:
    """``stopping.source_key`` of a candidate's sources as the database writes their JSON."""
    sources = json.loads(sources_text) if sources_text is not None else None
    return source_key(sources or [])


def swords_progress(
    *, benchmark: Benchmark, settings: SwordsSettings, work: CollectedWork, target_ids: Sequence[int] | None = None
) -> SchemeProgress:
    """Valid labels collected / needed in step 2 (reduce) and step 3 (score), per step and per target.

    Labels count as HIT generation counts them (``labels_missing`` over ``candidate_progress``):
    collected labels are capped per candidate at what the step needs, so over-collection on one
    candidate never hides a shortfall on another, and ``waiting`` is exactly what a new batch of
    the step would take. Step 3 needs labels only for the survivors of decided targets.
    Of ``target_ids`` only when given; each target's share of the figures is in its ``TargetCount``
    (docs/design.md §7, "Incremental figures").
    """
    chosen = None if target_ids is None else sorted(target_ids)
    rule = stopping_rule(benchmark=benchmark, settings=settings)
    if rule is not None:
        return _policy_progress(benchmark=benchmark, settings=settings, work=work, rule=rule, target_ids=chosen)
    step2_labels, step3_labels = settings.step2_labels, settings.step3_labels
    steps, targets, collected = _empty_counts(benchmark, "step 3: score", chosen)
    dropped: Counter[int] = Counter()
    surviving: Counter[int] = Counter()
    candidate_stages: Counter[str] = Counter()
    waiting: dict[int, Counter[int]] = defaultdict(Counter)
    for target_id, rows in candidate_progress(benchmark=benchmark, target_ids=chosen).items():
        for candidate in rows:
            candidate_stages[candidate.stage] += 1
            _count_stage(targets[target_id], candidate.stage)
            if candidate.stage == CandidateStage.EXCLUDED:
                # A researcher took it out (docs/annotator.md): it needs no labels.
                continue
            targets[target_id].candidates += 1
            missing = {
                step: labels_missing(candidate, step=step, step2_labels=step2_labels, step3_labels=step3_labels)
                for step in steps
            }
            collected[target_id][2][0] += step2_labels - missing[2]
            collected[target_id][2][1] += step2_labels
            if candidate.stage == CandidateStage.DROPPED:
                dropped[target_id] += 1
            elif candidate.stage in (CandidateStage.SCORE, CandidateStage.FINAL):
                surviving[target_id] += 1
                collected[target_id][3][0] += step3_labels - min(missing[3], step3_labels)
                collected[target_id][3][1] += step3_labels
            for step, stage in STEP_CANDIDATE_STAGE.items():
                held = work.open_candidates.get(step, frozenset())
                if candidate.stage == stage and missing[step] and candidate.candidate_id not in held:
                    steps[step].waiting += 1
                    waiting[target_id][step] += 1
    for target_id, target in targets.items():
        for step in steps:
            done, needed = collected[target_id][step]
            if target.steps[step] is not None:
                target.steps[step] = (done, needed)
            steps[step].collected += done
            steps[step].needed += needed
        target.counts = {"dropped": dropped[target_id], "scored": surviving[target_id]}
        steps[2].items += target.candidates
        steps[3].items += surviving[target_id]
        _share(target, collected[target_id], {2: target.candidates, 3: surviving[target_id]}, waiting[target_id])
    accepts = settings.pass_min_accepts
    summary = (
        f"Step 2 collects {step2_labels} valid labels per candidate; a candidate with at least {accepts} "
        f"accept{'s' if accepts != 1 else ''} goes on to step 3, which collects {step3_labels} more. Workers "
        f"below {settings.min_control_accuracy:.2f} control accuracy are filtered and their HITs re-collected."
    )
    return SchemeProgress(
        steps=[steps[2], steps[3]],
        targets=targets,
        candidates_by_stage={stage: candidate_stages.get(stage, 0) for stage in CandidateStage.values},
        target_columns=("dropped", "scored"),
        summary=summary,
    )


def _count_stage(target: TargetCount, stage: str) -> None:
    target.candidate_stages[stage] = target.candidate_stages.get(stage, 0) + 1


def _share(target: TargetCount, collected: dict[int, list[int]], items: dict[int, int], waiting: Counter[int]) -> None:
    """The target's share of each step's figures: (collected, needed, items, waiting)."""
    target.totals = {step: (done, needed, items[step], waiting[step]) for step, (done, needed) in collected.items()}


def _target_stages(benchmark_id: int, target_ids: list[int] | None) -> QuerySet[Target, tuple[int, str]]:
    rows = Target.objects.filter(benchmark_id=benchmark_id)
    if target_ids is not None:
        rows = rows.filter(pk__in=target_ids)
    return rows.values_list("pk", "stage")


def _empty_counts(
    benchmark: Benchmark, score_title: str, target_ids: list[int] | None = None
) -> tuple[dict[int, StepCount], dict[int, TargetCount], dict[int, dict[int, list[int]]]]:
    """Steps 2 and 3 with nothing counted yet, each target's counts (step 3 only once it left step 2),
    and the [collected, needed] pairs per target and step that the progress fills."""
    lacking = "candidates lacking labels in no open batch"
    steps = {
        2: StepCount(2, "step 2: reduce", "valid labels", "candidates", waiting_noun=lacking),
        3: StepCount(3, score_title, "valid labels", "candidates", waiting_noun=lacking),
    }
    targets = {
        pk: TargetCount(steps={2: (0, 0), 3: None if stage == TargetStage.REDUCE else (0, 0)})
        for pk, stage in shaped_rows(_target_stages, benchmark.pk, target_ids)
    }
    return steps, targets, {pk: {2: [0, 0], 3: [0, 0]} for pk in targets}


def _policy_progress(
    *,
    benchmark: Benchmark,
    settings: SwordsSettings,
    work: CollectedWork,
    rule: StoppingRule,
    target_ids: list[int] | None = None,
) -> SchemeProgress:
    """Progress under a stopping policy other than swords: step 2 counts the policy's first round per
    candidate; step 3 counts what the rounds collected and what the undecided candidates' next rounds
    ask for; each target counts its decided and undecided candidates, and a table counts them by source."""
    first, maximum = settings.reduce_labels, settings.total_labels
    steps, targets, collected = _empty_counts(benchmark, "step 3: score (rounds)", target_ids)
    figures: dict[int, Counter[str]] = defaultdict(Counter)
    by_source: dict[str, Counter[str]] = defaultdict(Counter)
    target_sources: dict[int, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    waiting: dict[int, Counter[int]] = defaultdict(Counter)
    candidate_stages: Counter[str] = Counter()
    for target_id, rows in candidate_progress(benchmark=benchmark, target_ids=target_ids).items():
        for candidate in rows:
            candidate_stages[candidate.stage] += 1
            _count_stage(targets[target_id], candidate.stage)
            if candidate.stage == CandidateStage.EXCLUDED:
                continue
            targets[target_id].candidates += 1
            collected[target_id][2][0] += min(candidate.step2_valid, first)
            collected[target_id][2][1] += first
            missing = {
                step: labels_missing(candidate, step=step, step2_labels=first, step3_labels=0, rule=rule)
                for step in steps
            }
            if candidate.stage != CandidateStage.REDUCE:
                beyond = max(0, candidate.valid_total - first)
                held_back = missing[3] if candidate.stage == CandidateStage.SCORE else 0
                collected[target_id][3][0] += beyond
                collected[target_id][3][1] += beyond + held_back
            if candidate.stage == CandidateStage.DROPPED:
                figures[target_id]["dropped"] += 1
            elif candidate.stage in (CandidateStage.SCORE, CandidateStage.FINAL):
                figures[target_id]["scored"] += 1
            decided = candidate.stage != CandidateStage.REDUCE and candidate_complete(
                candidate, step2_labels=first, step3_labels=0, rule=rule
            )
            state = "decided" if decided else "undecided"
            figures[target_id][state] += 1
            by_source[candidate.source or "(none)"][state] += 1
            target_sources[target_id][candidate.source or "(none)"][state] += 1
            for step, stage in STEP_CANDIDATE_STAGE.items():
                held = work.open_candidates.get(step, frozenset())
                if candidate.stage == stage and missing[step] and candidate.candidate_id not in held:
                    steps[step].waiting += 1
                    waiting[target_id][step] += 1
    columns = ("dropped", "scored", "decided", "undecided")
    title = f"Candidates by decision ({rule.policy} policy), by source"
    for target_id, target in targets.items():
        for step in steps:
            done, needed = collected[target_id][step]
            if target.steps[step] is not None:
                target.steps[step] = (done, needed)
            steps[step].collected += done
            steps[step].needed += needed
        target.counts = {column: figures[target_id][column] for column in columns}
        steps[2].items += target.candidates
        steps[3].items += figures[target_id]["scored"]
        scored = figures[target_id]["scored"]
        _share(target, collected[target_id], {2: target.candidates, 3: scored}, waiting[target_id])
        sources = target_sources[target_id]
        target.table_cells = {title: {source: (row["decided"], row["undecided"]) for source, row in sources.items()}}
    how = (
        "once no remaining label could change its acceptable or conceivable decision"
        if rule.policy == CURTAIL
        else f"once the chance that its remaining labels change a decision is below {rule.epsilon:g} "
        f"(a beta-binomial prior per source, estimated from this benchmark's labels), never before {rule.floor}"
    )
    summary = (
        f"Stopping policy {rule.policy}: step 2 collects {first} valid labels per candidate; a candidate stops "
        f"{how}, at {maximum} labels at most. Step 3 asks each undecided candidate for the fewest labels that "
        f"could decide it, in rounds of follow-up batches. Workers below {settings.min_control_accuracy:.2f} "
        "control accuracy are filtered and their HITs re-collected."
    )
    table = ProgressTable(
        title=title,
        columns=("decided", "undecided"),
        rows=tuple(
            (source, (counter["decided"], counter["undecided"])) for source, counter in sorted(by_source.items())
        ),
    )
    return SchemeProgress(
        steps=[steps[2], steps[3]],
        targets=targets,
        candidates_by_stage={stage: candidate_stages.get(stage, 0) for stage in CandidateStage.values},
        target_columns=columns,
        tables=[table],
        summary=summary,
    )


def swords_advancement(
    *, benchmark: Benchmark, settings: SwordsSettings, target_ids: Sequence[int] | None
) -> StageMoves:
    """What a refresh moves among ``target_ids`` (every target when None): ``pipeline.refresh_moves``
    over the stages and labels stored now."""
    targets = Target.objects.filter(benchmark=benchmark)
    if target_ids is not None:
        targets = targets.filter(pk__in=sorted(target_ids))
    stages = dict(targets.values_list("pk", "stage"))
    if not stages:
        return StageMoves()
    return refresh_moves(
        stages,
        # Every target: the benchmark's candidates, without naming each of its targets.
        candidate_progress(benchmark=benchmark, target_ids=None if target_ids is None else list(stages)),
        step2_labels=settings.reduce_labels,
        step3_labels=settings.step3_labels,
        pass_min_accepts=settings.pass_min_accepts,
        rule=stopping_rule(benchmark=benchmark, settings=settings, touched=target_ids, refreshing=True),
    )
