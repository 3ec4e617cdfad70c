"""The budget planner of a benchmark: labels and money to finish under each stopping policy
(docs/design.md §13), from the labels collected so far (a pilot) and the batch's reward and crowd.

The maths is ``analysis.budget``; this loads the counts (``BenchmarkData``), fits a beta prior
per source group, and prices the labels with the crowd's fee rule (``crowds.interface.costs``).
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import numpy as np
from django.conf import settings
from django.db.models import Field

from analysis import budget
from analysis.services.reports import BenchmarkData, benchmark_data
from annotation.models import Benchmark
from crowds.interface import get_backend
from crowds.interface.costs import CENT, assignments_cost
from hits.models import HIT, Batch, HITItem
from hits.preview import BatchPreview, PreviewPanel
from schemes import get_scheme


class BudgetUnavailable(LookupError):
    """The benchmark's scheme has no per-candidate stopping to plan (not SWORDS-like)."""


def budget_plan(
    *,
    benchmark: Benchmark,
    batch: Batch | None = None,
    reward: Decimal | None = None,
    backend: str | None = None,
    assignments_per_hit: int | None = None,
    simulations: int | None = None,
    resamples: int | None = None,
    seed: int | None = None,
    confidence: float = 0.9,
    data: BenchmarkData | None = None,
) -> dict[str, Any]:
    """Labels and cost still needed, per stopping policy, with an interval (JSON-ready).

    ``batch`` gives the reward, crowd and assignments per HIT (default: the benchmark's latest
    batch; without one, a new batch's defaults on the local queue); ``reward``, ``backend`` and
    ``assignments_per_hit`` override it (the batch form's panel prices the batch being made).
    ``simulations`` (the estimate's) defaults to ``BUDGET_PLAN_SIMULATIONS``, ``resamples`` (the
    interval's, under priors refitted to resamples of the targets labelled so far) to
    ``BUDGET_PLAN_RESAMPLES``, ``seed`` to the benchmark's, so a plan repeats.
    """
    scheme_settings = get_scheme(benchmark).settings(benchmark)
    step2 = getattr(scheme_settings, "step2_labels", None)
    total = getattr(scheme_settings, "total_labels", None)
    pass_min = getattr(scheme_settings, "pass_min_accepts", None)
    per_hit = getattr(scheme_settings, "candidates_per_hit", None)
    if step2 is None or total is None or pass_min is None or per_hit is None:
        raise BudgetUnavailable(
            f"{benchmark.name} is a {benchmark.get_scheme_display()} benchmark: its scheme collects no labels per "
            "candidate that a stopping policy could plan"
        )
    simulations = settings.BUDGET_PLAN_SIMULATIONS if simulations is None else simulations
    resamples = settings.BUDGET_PLAN_RESAMPLES if resamples is None else resamples
    seed = benchmark.seed if seed is None else seed
    data = data or benchmark_data(benchmark=benchmark)
    table = data.table
    accepts = table.counts[:, 0].astype(np.int64)
    labels = table.counts.sum(axis=1).astype(np.int64)
    context, priors = budget.plan_context(
        accepts=accepts,
        labels=labels,
        groups=table.source_group,
        settings=scheme_settings,
        benchmark=benchmark,
        candidate_ids=np.asarray(table.candidate_ids, dtype=np.int64),
        units=np.asarray(table.candidate_target, dtype=np.int64),
    )

    batch = batch or Batch.objects.filter(benchmark=benchmark).order_by("-created_at", "-id").first()

    def chosen(value: Any, field: str) -> Any:
        if value is not None:
            return value
        if batch is not None:
            return getattr(batch, field)
        # No batch named: a new batch's default, the model field's.
        model_field = Batch._meta.get_field(field)
        assert isinstance(model_field, Field)
        return model_field.get_default()

    reward = Decimal(chosen(reward, "reward"))
    backend_name = str(chosen(backend, "backend"))
    hit_size = int(chosen(assignments_per_hit, "assignments_per_hit"))
    backend_rule = get_backend(backend_name)
    per_assignment = _candidates_per_assignment(benchmark, default=per_hit)

    def money(count: int) -> str:
        assignments = math.ceil(count / per_assignment) if count else 0
        if backend_rule.remote:
            cost = assignments_cost(reward=reward, count=assignments, hit_size=hit_size, fees=backend_rule.fees)
        else:
            cost = reward * assignments
        return str(cost.quantize(CENT))

    plans: list[dict[str, Any]] = []
    for policy in budget.RULES:
        forecast = budget.forecast_labels(
            policy=policy,
            accepts=accepts,
            labels=labels,
            context=context,
            simulations=simulations,
            seed=seed,
            confidence=confidence,
            resamples=resamples,
        )
        plans.append(
            {
                "policy": policy,
                "available": True,
                "exact": forecast.exact,
                "settled_candidates": forecast.settled,
                "labels": {"estimate": forecast.estimate, "low": forecast.low, "high": forecast.high},
                "assignments": {
                    key: math.ceil(value / per_assignment)
                    for key, value in (("estimate", forecast.estimate), ("low", forecast.low), ("high", forecast.high))
                },
                "cost": {
                    "estimate": money(forecast.estimate),
                    "low": money(forecast.low),
                    "high": money(forecast.high),
                },
            }
        )
    return {
        "benchmark": benchmark.name,
        "candidates": int(labels.size),
        "labels_so_far": int(labels.sum()),
        "candidates_with_labels": int((labels > 0).sum()),
        "max_labels": total,
        "batch": batch.pk if batch is not None else None,
        "backend": backend_name,
        "reward": str(reward),
        "with_fee": backend_rule.remote,
        "assignments_per_hit": hit_size,
        "candidates_per_assignment": per_assignment,
        "simulations": simulations,
        "resamples": resamples,
        "seed": seed,
        "confidence": confidence,
        "priors": {
            group: {"alpha": fit.alpha, "beta": fit.beta, "mean": fit.mean, "candidates": fit.candidates}
            for group, fit in priors.items()
        },
        "policies": plans,
    }


def _candidates_per_assignment(benchmark: Benchmark, *, default: int) -> float:
    """Candidates one assignment judges, as the benchmark's HITs so far hold them (controls left
    out), else the scheme's ``candidates_per_hit``."""
    hits = HIT.objects.filter(batch__benchmark=benchmark).count()
    if not hits:
        return float(default)
    items = HITItem.objects.filter(hit__batch__benchmark=benchmark, control=False, candidate__isnull=False).count()
    return items / hits if items else float(default)


def budget_preview_panel(benchmark: Benchmark, preview: BatchPreview) -> PreviewPanel | None:
    """The batch form's budget panel: the plan priced at the previewed batch's reward and crowd;
    nothing for a scheme without per-candidate labels or a benchmark with no label yet."""
    try:
        plan = budget_plan(
            benchmark=benchmark,
            reward=preview.cost.reward,
            backend=preview.backend,
            assignments_per_hit=preview.assignments_per_hit,
        )
    except BudgetUnavailable:
        return None
    return PreviewPanel(template="analysis/_budget_panel.html", context=plan)
