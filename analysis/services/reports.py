"""What the benchmark says: statistics, agreement, the filter audit and data frames.

Each function loads rows in bulk (``analysis.selectors``), hands plain arrays to the pure
functions of ``analysis.stats``, ``analysis.agreement`` and ``analysis.audit``, and returns
JSON-ready results.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from django.db import transaction

from analysis import agreement, audit, filtered_workers, stats
from analysis.selectors import (
    CandidateTable,
    LabelArrays,
    candidate_table,
    filtered_label_arrays,
    import_origins,
    label_arrays,
    reannotation_origin,
    scans_without_jit,
    worker_control_accuracy,
    worker_names,
)
from analysis.services.target_rows import CANDIDATE_ROW, kept_target_rows
from annotation.changes import benchmark_changed
from annotation.models import Benchmark, Context
from crowdlex.progress import Progress
from crowdlex.statements import shaped_count
from review.adjudication import applied_decisions
from schemes import get_scheme
from schemes.scores import ACCEPT, DEFAULT_THRESHOLDS, ScoreThresholds, scores_from_counts

# pandas is imported by the functions that use it: it takes about a second to import, which
# every command and web process paid at start-up (analysis registers its formats at start).
if TYPE_CHECKING:
    pass

logger = logging.getLogger(__name__)


@dataclass
class BenchmarkData:
    """A benchmark's rows, loaded once and shared by the statistics, agreement and audit of one request.

    A re-annotation (SWORDS App. C.1) is a second label set for the same candidates, imported
    under its own origin and marked with ``benchmark_reannotation_set``; ``reannotation`` names
    another origin for one request ("" for none). It is kept apart: every other figure is
    computed without it.
    """

    benchmark: Benchmark
    requested_reannotation: str | None = None
    # Only the targets of this split (analysis.models.TargetSplit); None: the whole benchmark.
    split: str | None = None

    @cached_property
    def _candidates(self) -> CandidateTable:
        with scans_without_jit():
            return candidate_table(benchmark=self.benchmark, split=self.split)

    @cached_property
    def _all_labels(self) -> LabelArrays:
        with scans_without_jit():
            return label_arrays(benchmark=self.benchmark, table=self._candidates, split=self.split)

    @property
    def origins(self) -> list[str]:
        """Import origins of the benchmark's valid labels, in the order they were first stored."""
        return self._all_labels.origins

    @cached_property
    def reannotation_origin(self) -> str | None:
        requested = self.requested_reannotation
        origin = reannotation_origin(self.benchmark) if requested is None else requested
        return origin if origin and origin in self._all_labels.origins else None

    def _reannotation_mask(self) -> npt.NDArray[np.bool_]:
        labels = self._all_labels
        if self.reannotation_origin is None:
            return np.zeros(len(labels), dtype=bool)
        return labels.origin == labels.origins.index(self.reannotation_origin)

    @cached_property
    def labels(self) -> LabelArrays:
        """Valid labels, the re-annotation left out."""
        mask = self._reannotation_mask()
        return self._all_labels.select(~mask) if mask.any() else self._all_labels

    @cached_property
    def reannotation(self) -> LabelArrays | None:
        mask = self._reannotation_mask()
        return self._all_labels.select(mask) if mask.any() else None

    @cached_property
    def table(self) -> CandidateTable:
        """Candidates with their counts of valid labels (the re-annotation left out)."""
        table = self._candidates
        return replace(table, counts=self.labels.count_table(table.candidate_ids.size))


def benchmark_data(
    *, benchmark: Benchmark, reannotation_origin: str | None = None, split: str | None = None
) -> BenchmarkData:
    """Rows of a benchmark, or of one of its splits, for the analyses (loaded lazily, once)."""
    return BenchmarkData(benchmark=benchmark, requested_reannotation=reannotation_origin, split=split)


def benchmark_reannotation_set(*, benchmark: Benchmark, origin: str | None) -> Benchmark:
    """Mark the labels imported from ``origin`` as a re-annotation of the benchmark (None: unmark).

    The statistics, agreement, audit and exports then leave those labels out, and the agreement
    compares the benchmark's ranking with rankings drawn from them (RBO against k). The update
    touches only ``extra["analysis"]`` of the row, under a row lock, so concurrent imports that
    write ``extra["swords"]`` are not lost.
    """
    if origin is not None and origin not in import_origins(benchmark=benchmark):
        raise ValueError(f"no labels of benchmark {benchmark.name!r} were imported from {origin!r}")
    with transaction.atomic():
        locked = Benchmark.objects.select_for_update(no_key=True).get(pk=benchmark.pk)
        analysis = dict(locked.extra.get("analysis") or {})
        if origin is None:
            analysis.pop("reannotation_origin", None)
        else:
            analysis["reannotation_origin"] = origin
        locked.extra = {**locked.extra, "analysis": analysis}
        locked.save(update_fields=["extra"])
        # The statistics leave the re-annotation out from now on (annotation.changes).
        benchmark_changed(benchmark_id=benchmark.pk)
    benchmark.extra = locked.extra
    return benchmark


# --- statistics ------------------------------------------------------------------------------


def benchmark_statistics(
    *,
    benchmark: Benchmark,
    thresholds: ScoreThresholds = DEFAULT_THRESHOLDS,
    data: BenchmarkData | None = None,
) -> dict[str, Any]:
    """SWORDS Table 2 and Fig. 1 figures of a benchmark over its valid labels (docs/design.md §7)."""
    data = data or benchmark_data(benchmark=benchmark)
    table = data.table
    # Researchers' decisions set their candidates' scores where the benchmark says so (docs/design.md §17).
    decisions = applied_decisions(benchmark=benchmark)
    result = stats.benchmark_statistics(
        contexts=table.contexts,
        target_pos=table.target_pos,
        candidate_target=table.candidate_target,
        counts=table.counts,
        candidate_source_group=table.source_group,
        thresholds=thresholds,
        decided=[decisions.get(int(pk)) for pk in table.candidate_ids] if decisions else None,
    )
    return {"benchmark": benchmark.name, **result, "reannotation_origin": data.reannotation_origin}


def statistics_kept(*, benchmark: Benchmark) -> bool:
    """Whether the statistics can be summed from rows kept per target: the candidates' tallies count
    every valid label, so not while a re-annotation is marked (its labels are left out)."""
    return reannotation_origin(benchmark) is None


def benchmark_statistics_kept(
    *, benchmark: Benchmark, thresholds: ScoreThresholds = DEFAULT_THRESHOLDS
) -> dict[str, Any]:
    """``benchmark_statistics`` of the whole benchmark, from rows kept per target and their sums
    (``analysis.services.target_rows.kept_target_rows``): after a submit only the targets it touched
    are read and summed again, and the figures are the same function of the same exact sums
    (docs/design.md §7, "Incremental figures"). Only where ``statistics_kept``."""
    rows = kept_target_rows(benchmark=benchmark)
    # Built by the ORM once per process (``crowdlex.statements.shaped_rows``): read after every change.
    contexts = shaped_count(Context, "benchmark_id", benchmark.pk)
    decisions = applied_decisions(benchmark=benchmark)
    if not decisions:
        # From the sums kept beside the rows: what the targets a change touched cost, not every target.
        result = stats.table2_from_sums(rows.total.table2, contexts=contexts, thresholds=thresholds)
        return {"benchmark": benchmark.name, **result, "reannotation_origin": None}
    # Decisions set single candidates' scores: summed here from every target's rows.
    parts = rows.all()
    kept = [parts[pk] for pk in sorted(parts)]
    table = np.frombuffer(b"".join(each.candidates for each in kept), dtype=CANDIDATE_ROW)
    sizes = np.asarray([len(each.candidates) // CANDIDATE_ROW.itemsize for each in kept], dtype=np.int64)
    target_of = np.repeat(np.arange(len(kept), dtype=np.int64), sizes)
    ids = table["id"]
    counts = np.stack([table["accepts"], table["rejects"], table["abstains"]], axis=1).astype(np.int64)
    groups = table["group"]
    result = stats.benchmark_statistics(
        contexts=contexts,
        target_pos=[each.pos for each in kept],
        candidate_target=target_of,
        counts=counts,
        candidate_source_group=np.asarray(stats.SOURCE_GROUPS, dtype=object)[groups].tolist(),
        thresholds=thresholds,
        decided=[decisions.get(int(pk)) for pk in ids],
    )
    return {"benchmark": benchmark.name, **result, "reannotation_origin": None}


# --- agreement -------------------------------------------------------------------------------


def benchmark_agreement(
    *,
    benchmark: Benchmark,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = None,
    min_overlap: int = 1,
    collapse_abstain: bool = True,
    rbo_ks: Iterable[int] = range(1, 10),
    rbo_samples: int = 100,
    rbo_p: float = 0.9,
    include_pairs: bool = True,
    data: BenchmarkData | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Krippendorff's alpha with a bootstrap interval, each worker against the leave-one-out
    majority (with their control accuracy), Cohen's kappa per pair of workers, and, when the
    benchmark holds a re-annotation, RBO against k (docs/design.md §7). ``seed`` defaults to the
    benchmark's, so figures are reproducible. ``progress(figures done, figures)`` after each of its
    six figures (the two bootstraps of alpha take the longest).
    """

    def done(count: int) -> None:
        if progress is not None:
            progress(count, 6)

    data = data or benchmark_data(benchmark=benchmark)
    seed = benchmark.seed if seed is None else seed
    table, labels = data.table, data.labels
    alpha = agreement.krippendorff_alpha_bootstrap(table.counts, resamples=resamples, confidence=confidence, seed=seed)
    done(1)
    alpha_without_abstain = agreement.krippendorff_alpha_bootstrap(
        table.counts[:, :2], resamples=resamples, confidence=confidence, seed=seed
    )
    done(2)

    names = worker_names(labels.worker_ids.tolist())
    controls = worker_control_accuracy(benchmark=benchmark)
    per_worker = agreement.leave_one_out_agreement(
        candidate=labels.candidate_row, worker=labels.worker_row, value=labels.value, collapse_abstain=collapse_abstain
    )
    workers: list[dict[str, Any]] = []
    for row in per_worker.itertuples(index=False):
        worker_id = int(labels.worker_ids[int(row.worker)])
        correct, total = controls.get(worker_id, (0, 0))
        workers.append(
            {
                "worker_id": worker_id,
                "worker": names.get(worker_id, ""),
                "labels": int(row.labels),
                "compared": int(row.compared),
                "agreed": int(row.agreed),
                "ties": int(row.ties),
                "agreement": _number(row.agreement),
                "controls_correct": correct,
                "controls_total": total,
                "control_accuracy": correct / total if total else None,
            }
        )

    done(3)
    filtered = _filtered_workers(benchmark=benchmark, data=data, controls=controls)
    done(4)

    pairs = agreement.pairwise_cohen_kappa(
        candidate=labels.candidate_row, worker=labels.worker_row, value=labels.value, min_overlap=min_overlap
    )
    kappa: dict[str, Any] = {"min_overlap": min_overlap, "summary": agreement.kappa_summary(pairs)}
    if include_pairs:
        worker_a = labels.worker_ids[pairs["worker_a"].to_numpy(dtype=np.int64)] if len(pairs) else []
        worker_b = labels.worker_ids[pairs["worker_b"].to_numpy(dtype=np.int64)] if len(pairs) else []
        kappa["pairs"] = [
            {
                "worker_a_id": int(a),
                "worker_a": names.get(int(a), ""),
                "worker_b_id": int(b),
                "worker_b": names.get(int(b), ""),
                "items": int(items),
                "observed": _number(observed),
                "kappa": _number(value),
            }
            for a, b, items, observed, value in zip(
                worker_a, worker_b, pairs["items"], pairs["observed"], pairs["kappa"], strict=True
            )
        ]

    done(5)
    rbo = _rbo(data, ks=rbo_ks, samples=rbo_samples, p=rbo_p, seed=seed)
    done(6)
    return {
        "benchmark": benchmark.name,
        "labels": len(labels),
        "workers": len(workers),
        "seed": seed,
        "alpha": alpha.as_dict(),
        "alpha_without_abstain": alpha_without_abstain.as_dict(),
        "collapse_abstain": collapse_abstain,
        "worker_agreement": workers,
        "filtered_worker_agreement": filtered,
        "kappa": kappa,
        "rbo": rbo,
    }


def _filtered_workers(
    *, benchmark: Benchmark, data: BenchmarkData, controls: dict[int, tuple[int, int]]
) -> list[dict[str, Any]]:
    """Workers with filtered work, their filtered labels against the valid labels' majority."""
    candidate, worker, value = filtered_label_arrays(benchmark=benchmark, table=data.table)
    per_worker = filtered_workers.agreement_with_valid_majority(
        candidate=candidate, worker=worker, value=value, valid_counts=data.table.counts
    )
    names = worker_names(per_worker["worker"].astype(int).tolist())
    rows = []
    for row in per_worker.itertuples(index=False):
        worker_id = int(row.worker)
        correct, total = controls.get(worker_id, (0, 0))
        rows.append(
            {
                "worker_id": worker_id,
                "worker": names.get(worker_id, ""),
                "labels": int(row.labels),
                "compared": int(row.compared),
                "agreed": int(row.agreed),
                "agreement": _number(row.agreement),
                "controls_correct": correct,
                "controls_total": total,
                "control_accuracy": correct / total if total else None,
            }
        )
    return rows


def _rbo(data: BenchmarkData, *, ks: Iterable[int], samples: int, p: float, seed: int) -> dict[str, Any] | None:
    reannotation = data.reannotation
    if reannotation is None:
        return None
    points = agreement.rbo_against_k(
        candidate_target=data.table.candidate_target,
        reference_score=scores_from_counts(data.table.counts),
        label_candidate=reannotation.candidate_row,
        label_accept=(reannotation.value == ACCEPT).astype(np.int64),
        ks=ks,
        samples=samples,
        p=p,
        seed=seed,
    )
    candidates = np.unique(reannotation.candidate_row)
    return {
        "reannotation_origin": data.reannotation_origin,
        "candidates": int(candidates.size),
        "targets": int(np.unique(data.table.candidate_target[candidates]).size),
        "labels": len(reannotation),
        "p": p,
        "samples": samples,
        "points": [{"k": point.k, "mean": _number(point.mean), "std": _number(point.std)} for point in points],
    }


def _number(value: Any) -> float | None:
    number = float(value)
    return number if np.isfinite(number) else None


# --- filter audit ----------------------------------------------------------------------------


class AuditUnavailable(LookupError):
    """The benchmark's scheme has no reduce step whose filter could be audited."""


def benchmark_filter_audit(
    *,
    benchmark: Benchmark,
    step2_labels: int | None = None,
    pass_min_accepts: int | None = None,
    min_labels: int | None = None,
    thresholds: ScoreThresholds = DEFAULT_THRESHOLDS,
    grid_step2_labels: Iterable[int] = range(1, 6),
    grid_pass_min_accepts: Iterable[int] = range(1, 4),
    data: BenchmarkData | None = None,
) -> dict[str, Any]:
    """The filter audit (SWORDS §4.4) on candidates with at least ``min_labels`` valid labels.

    Settings default to the benchmark's; ``min_labels`` to its full label count
    (step2_labels + step3_labels), i.e. candidates labeled in full. ``grid`` repeats the audit
    for other settings so researchers can compare them.
    """
    data = data or benchmark_data(benchmark=benchmark)
    settings = get_scheme(benchmark).settings(benchmark)
    # A scheme whose candidates pass a reduce step before they are scored names these settings.
    step2_labels = getattr(settings, "step2_labels", None) if step2_labels is None else step2_labels
    pass_min_accepts = getattr(settings, "pass_min_accepts", None) if pass_min_accepts is None else pass_min_accepts
    min_labels = getattr(settings, "total_labels", None) if min_labels is None else min_labels
    if step2_labels is None or pass_min_accepts is None or min_labels is None:
        raise AuditUnavailable(
            f"{benchmark.name} is a {benchmark.get_scheme_display()} benchmark: its scheme has no reduce step to audit"
        )
    if step2_labels < 1 or pass_min_accepts < 1 or min_labels < 1:
        raise ValueError("step2_labels, pass_min_accepts and min_labels must be at least 1")
    table, labels = data.table, data.labels
    totals = table.counts.sum(axis=1)
    audited = totals >= min_labels
    keep = audited[labels.candidate_row]
    # Renumber the audited candidates densely so the pure functions see only them.
    rows = np.cumsum(audited) - 1
    label_candidate = rows[labels.candidate_row[keep]]
    label_accept = (labels.value[keep] == ACCEPT).astype(np.int64)
    n_audited = int(audited.sum())
    early = audit.accepts_in_first(
        label_candidate=label_candidate, label_accept=label_accept, n_candidates=n_audited, first=step2_labels
    )
    result = audit.filter_audit(
        early_accepts=early,
        accepts=table.counts[audited, 0],
        totals=totals[audited],
        pass_min_accepts=pass_min_accepts,
        thresholds=thresholds,
    )
    grid = audit.filter_audit_grid(
        label_candidate=label_candidate,
        label_accept=label_accept,
        n_candidates=n_audited,
        step2_labels_options=[n for n in grid_step2_labels if n < min_labels],
        pass_min_accepts_options=list(grid_pass_min_accepts),
        thresholds=thresholds,
    )
    return {
        "benchmark": benchmark.name,
        "step2_labels": step2_labels,
        "min_labels": min_labels,
        **result,
        "grid": grid,
    }
