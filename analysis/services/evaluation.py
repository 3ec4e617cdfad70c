"""Evaluating a system's result file against a benchmark and the benchmark's leaderboard
(docs/evaluation.md). What the figures are and how a result file reads is the benchmark's
scheme's evaluator (``analysis.evaluation.SystemEvaluator``); this finds it, reads the file, and
keeps the figures."""

from __future__ import annotations

import gzip
import hashlib
import io
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction
from django.db.models import Count, Max, Q, QuerySet

from analysis.evaluation import BenchmarkVersion, EvaluationOptions, ResultError, SystemEvaluator, scheme_evaluator
from analysis.models import SystemEvaluation
from annotation.changes import benchmark_cached
from annotation.importers import ImportFailed
from annotation.importers.reading import READ_ERRORS, Source, open_binary, source_name
from annotation.models import Benchmark, Candidate, Label
from annotation.selectors import benchmark_extent
from crowdlex.statements import shaped_rows

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


@dataclass(frozen=True)
class KeptResult:
    """A result file as parsed, with what is kept of it to score it again later: its name, the
    SHA-256 of its content (decompressed, so a file gzipped or not hashes alike) and that content
    gzipped."""

    parsed: Any
    name: str
    sha256: str
    content: bytes


class _Kept(io.RawIOBase):
    """The content a parser reads, hashed and gzipped as it passes (memory: the compressed copy)."""

    def __init__(self, stream: io.BufferedIOBase) -> None:
        self._stream = stream
        self.digest = hashlib.sha256()
        self.buffer = io.BytesIO()
        self._gzip = gzip.GzipFile(fileobj=self.buffer, mode="wb", mtime=0)

    def readable(self) -> bool:
        return True

    def readinto(self, target: Any) -> int:
        chunk = self._stream.read(len(target))
        count = len(chunk)
        target[:count] = chunk
        self.digest.update(chunk)
        self._gzip.write(chunk)
        return count

    def finish(self) -> bytes:
        """Read what the parser left (content after the document) and close the gzipped copy."""
        while self._stream.read(1024 * 1024):
            pass
        self._gzip.close()
        return self.buffer.getvalue()


def benchmark_version(*, benchmark: Benchmark) -> BenchmarkVersion:
    """The candidates and labels the benchmark holds now (docs/evaluation.md, "Versions"): the
    highest id and the count of each, two aggregate queries over indexed columns: each reads one
    range of its index (benchmark, id) by the row's own benchmark (docs/design.md §7, "Labels by
    benchmark", "Candidates by benchmark"), rather than joining every label to its candidate and target."""
    candidates = Candidate.objects.filter(benchmark=benchmark).aggregate(top=Max("id"), count=Count("id"))
    labels = Label.objects.filter(benchmark=benchmark).aggregate(top=Max("id"), count=Count("id"))
    return BenchmarkVersion(
        candidates_through=candidates["top"] or 0,
        labels_through=labels["top"] or 0,
        candidates=candidates["count"],
        labels=labels["count"],
    )


def benchmark_version_now(*, benchmark: Benchmark) -> BenchmarkVersion:
    """``benchmark_version`` as the evaluation page shows it beside each saved evaluation: read from
    the counts kept per target (``annotation.selectors.benchmark_extent``), so after a submit it
    counts the targets that submit changed, not every label."""
    return BenchmarkVersion(**benchmark_extent(benchmark=benchmark))


def result_load(*, benchmark: Benchmark, source: Source, keep: bool = False) -> Any:
    """A result file (a path or a binary upload, gzipped or not), parsed by the evaluator of the
    benchmark's scheme, in bounded memory (docs/evaluation.md, "Limits"): it is read as a stream
    through the reader every upload goes through, at most ``EVALUATION_MAX_RESULT_BYTES`` of content
    once decompressed, and the evaluator keeps what it parses, not the file's text.

    ``keep``: a ``KeptResult`` instead, with the content gzipped as it was read (so that the saved
    system can be scored again on the grown benchmark: docs/evaluation.md, "Versions")."""
    evaluator = evaluation_check(benchmark=benchmark)
    name = source_name(source)
    try:
        with open_binary(
            source,
            file=name,
            max_bytes=settings.EVALUATION_MAX_RESULT_BYTES,
            max_bytes_setting="EVALUATION_MAX_RESULT_BYTES",
        ) as stream:
            if not keep:
                return evaluator.parse(stream, file=name)
            tee = _Kept(stream)
            parsed = evaluator.parse(io.BufferedReader(tee), file=name)
            content = tee.finish()
            return KeptResult(parsed=parsed, name=name, sha256=tee.digest.hexdigest(), content=content)
    except ResultError:
        raise
    except ImportFailed as exc:
        raise ResultError(str(exc)) from exc
    except (ValueError, *READ_ERRORS) as exc:
        raise ResultError(f"{name} is not a result file in {evaluator.format_name}: {exc}") from exc


def system_evaluate(
    *,
    benchmark: Benchmark,
    result: Any,
    per_target: bool = False,
    split: str | None = None,
    version: BenchmarkVersion | None = None,
) -> dict[str, Any]:
    """The figures of a parsed result (``result_load``; a ``KeptResult`` is taken too) against the
    benchmark, or one split of it, by the JSON names its scheme's evaluator gives them; with
    ``version``, against the candidates and labels the benchmark held then.

    Raises ``analysis.evaluation.ResultError`` for a result the benchmark (or the split) cannot
    take, ``EvaluationUnavailable`` when its scheme declares no evaluation.
    """
    evaluator = evaluation_check(benchmark=benchmark)
    parsed = result.parsed if isinstance(result, KeptResult) else result
    return evaluator.evaluate(benchmark, parsed, EvaluationOptions(per_target=per_target, split=split, version=version))


def _history_entry(saved: SystemEvaluation) -> dict[str, Any]:
    return {
        "version": saved.version,
        "figures": saved.figures,
        "at": saved.created_at.isoformat() if saved.created_at else None,
        "result_sha256": saved.result_sha256,
    }


def system_evaluation_save(
    *,
    benchmark: Benchmark,
    system: str,
    figures: Mapping[str, Any],
    split: str | None = None,
    created_by: User | AnonymousUser | None = None,
    result: KeptResult | None = None,
    version: BenchmarkVersion | None = None,
) -> SystemEvaluation:
    """Keep a system's figures (without those per target) on the leaderboard of the benchmark, or
    of the split they are of, with the benchmark version they were scored on (now, when not given)
    and, given a ``KeptResult``, the result file to score again later. A second save under a name
    replaces the first, whose figures and version go to the row's history."""
    if not system.strip() or system.strip() == ORACLE:
        raise ValueError(f"a system needs a name other than {ORACLE!r}")
    version = version or benchmark_version(benchmark=benchmark)
    with transaction.atomic():
        saved = (
            SystemEvaluation.objects.select_for_update()
            .filter(benchmark=benchmark, system=system.strip(), split=split or "")
            .first()
        )
        if saved is None:
            saved = SystemEvaluation(benchmark=benchmark, system=system.strip(), split=split or "")
        else:
            saved.history = [*saved.history, _history_entry(saved)]
        saved.figures = {key: value for key, value in figures.items() if key != "per_target"}
        saved.version = version.as_dict()
        saved.created_by = created_by if isinstance(created_by, User) else None
        if result is not None:
            saved.result_name, saved.result_sha256, saved.result = result.name, result.sha256, result.content
        saved.save()
    return saved


def kept_result_parse(*, evaluation: SystemEvaluation) -> Any:
    """The saved system's result file, parsed again from the copy kept with it."""
    if evaluation.result is None:
        raise ResultError(f"the result file of {evaluation.system} was not kept: evaluate and save it again")
    evaluator = evaluation_check(benchmark=evaluation.benchmark)
    with gzip.GzipFile(fileobj=io.BytesIO(bytes(evaluation.result))) as stream:
        return evaluator.parse(stream, file=evaluation.result_name or evaluation.system)


def system_evaluation_rescore(
    *, evaluation: SystemEvaluation, by: User | AnonymousUser | None = None
) -> SystemEvaluation:
    """Score a saved system again, from its kept result file, on the benchmark as it stands now
    (docs/evaluation.md, "Versions"): its figures and version are replaced, the earlier ones kept
    in its history. ``ResultError`` when the result file was not kept."""
    parsed = kept_result_parse(evaluation=evaluation)
    figures = system_evaluate(benchmark=evaluation.benchmark, result=parsed, split=evaluation.split or None)
    return system_evaluation_save(
        benchmark=evaluation.benchmark,
        system=evaluation.system,
        figures=figures,
        split=evaluation.split or None,
        created_by=by if isinstance(by, User) else evaluation.created_by,
    )


def evaluation_reproduce(*, evaluation: SystemEvaluation) -> dict[str, Any]:
    """A saved system's figures computed again on the benchmark version it was scored on (which
    gives its saved figures while the labels then valid still are)."""
    version = BenchmarkVersion.from_dict(evaluation.version)
    return system_evaluate(
        benchmark=evaluation.benchmark,
        result=kept_result_parse(evaluation=evaluation),
        split=evaluation.split or None,
        version=version,
    )


def _saved_systems(benchmark_id: int, split: str) -> QuerySet[SystemEvaluation, tuple[Any, ...]]:
    return (
        SystemEvaluation.objects.filter(benchmark_id=benchmark_id, split=split)
        .order_by("system")
        .annotate(kept=Q(result__isnull=False))
        .values_list("system", "figures", "version", "kept")
    )


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
    # Built by the ORM once per process and split (``crowdlex.statements.shaped_rows``): the
    # evaluation page reads it after every change.
    systems = [
        {"system": system, "oracle": False, **figures, "version": version or None, "rescorable": kept}
        for system, figures, version, kept in shaped_rows(_saved_systems, benchmark.pk, split or "")
    ]

    def rank(row: dict[str, Any]) -> float:
        value = row.get(evaluator.main_figure)
        return -value if isinstance(value, int | float) and not math.isnan(value) else math.inf

    return rows + sorted(systems, key=rank)
