"""Evaluating a system's result file against a benchmark and the benchmark's leaderboard
(docs/evaluation.md). What the figures are and how a result file reads is the benchmark's
scheme's evaluator (``analysis.evaluation.SystemEvaluator``); this finds it, reads the file, and
keeps the figures."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User

from analysis.evaluation import EvaluationOptions, ResultError, SystemEvaluator, scheme_evaluator
from analysis.models import SystemEvaluation
from annotation.changes import benchmark_cached
from annotation.importers import ImportFailed
from annotation.importers.reading import READ_ERRORS, Source, open_binary, source_name
from annotation.models import Benchmark

ORACLE = "oracle"


class EvaluationUnavailable(LookupError):
    """The benchmark's scheme registers no system evaluation (``analysis.evaluation.register_evaluator``)."""


def evaluation_check(*, benchmark: Benchmark) -> SystemEvaluator:
    """The evaluator of the benchmark's scheme; refuse, by name, a benchmark whose scheme declares none."""
    evaluator = scheme_evaluator(benchmark)
    if evaluator is None:
        raise EvaluationUnavailable(
            f"{benchmark.name} is a {benchmark.get_scheme_display()} benchmark: its scheme declares no "
            "system evaluation"
        )
    return evaluator


def result_load(*, benchmark: Benchmark, source: Source) -> Any:
    """A result file (a path or a binary upload, gzipped or not), parsed by the evaluator of the
    benchmark's scheme, in bounded memory (docs/evaluation.md, "Limits"): it is read as a stream
    through the reader every upload goes through, at most ``EVALUATION_MAX_RESULT_BYTES`` of content
    once decompressed, and the evaluator keeps what it parses, not the file's text."""
    evaluator = evaluation_check(benchmark=benchmark)
    name = source_name(source)
    try:
        with open_binary(
            source,
            file=name,
            max_bytes=settings.EVALUATION_MAX_RESULT_BYTES,
            max_bytes_setting="EVALUATION_MAX_RESULT_BYTES",
        ) as stream:
            return evaluator.parse(stream, file=name)
    except ResultError:
        raise
    except ImportFailed as exc:
        raise ResultError(str(exc)) from exc
    except (ValueError, *READ_ERRORS) as exc:
        raise ResultError(f"{name} is not a result file in {evaluator.format_name}: {exc}") from exc


def system_evaluate(
    *, benchmark: Benchmark, result: Any, per_target: bool = False, split: str | None = None
) -> dict[str, Any]:
    """The figures of a parsed result (``result_load``) against the benchmark, or one split of it, by
    the JSON names its scheme's evaluator gives them.

    Raises ``analysis.evaluation.ResultError`` for a result the benchmark (or the split) cannot
    take, ``EvaluationUnavailable`` when its scheme declares no evaluation.
    """
    evaluator = evaluation_check(benchmark=benchmark)
    return evaluator.evaluate(benchmark, result, EvaluationOptions(per_target=per_target, split=split))


def system_evaluation_save(
    *,
    benchmark: Benchmark,
    system: str,
    figures: Mapping[str, Any],
    split: str | None = None,
    created_by: User | AnonymousUser | None = None,
) -> SystemEvaluation:
    """Keep a system's figures (without those per target) on the leaderboard of the benchmark, or
    of the split they are of (a second save under a name replaces the first)."""
    if not system.strip() or system.strip() == ORACLE:
        raise ValueError(f"a system needs a name other than {ORACLE!r}")
    saved, _ = SystemEvaluation.objects.update_or_create(
        benchmark=benchmark,
        system=system.strip(),
        split=split or "",
        defaults={
            "figures": {key: value for key, value in figures.items() if key != "per_target"},
            "created_by": created_by if isinstance(created_by, User) else None,
        },
    )
    return saved


def benchmark_leaderboard(*, benchmark: Benchmark, split: str | None = None) -> list[dict[str, Any]]:
    """The leaderboard of the benchmark or of one split: the oracle row, when the evaluator computes
    one from the benchmark itself, then the systems saved for it by their main figure, highest
    first (a saved row without it last)."""
    evaluator = evaluation_check(benchmark=benchmark)
    # The oracle reads every label: once per change of the benchmark (annotation.changes).
    oracle = benchmark_cached(
        benchmark=benchmark,
        name=f"oracle:{split or ''}",
        compute=lambda: evaluator.oracle(benchmark, EvaluationOptions(split=split)),
    )
    rows = [{"system": ORACLE, "oracle": True, **oracle}] if oracle is not None else []
    saved = SystemEvaluation.objects.filter(benchmark=benchmark, split=split or "").order_by("system")
    systems = [{"system": row.system, "oracle": False, **row.figures} for row in saved]

    def rank(row: dict[str, Any]) -> float:
        value = row.get(evaluator.main_figure)
        return -value if isinstance(value, int | float) and not math.isnan(value) else math.inf

    return rows + sorted(systems, key=rank)
