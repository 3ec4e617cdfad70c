"""A complete evaluation (docs/evaluation.md, "Complete evaluation"; docs/design.md §14): the
substitutes of a saved system that the benchmark never scored are proposed with the cost of
judging them, added as candidates under ``system:<name>`` and judged by a batch under the
benchmark's own rules, and the system is then scored lenient, strict and complete, with bootstrap
intervals over targets. Also the benchmark's versions and the re-scoring of a saved system on the
grown benchmark.

The scheme's evaluator says whether it can (``SystemEvaluator.judges_unscored``), which
substitutes are unscored and what the figures are; this names no scheme.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from analysis.evaluation import BenchmarkVersion, BootstrapOptions, SystemEvaluator
from analysis.models import JudgementStatus, SystemEvaluation, UnscoredJudgement
from analysis.services.evaluation import (
    KeptResult,
    benchmark_version,
    evaluation_check,
    kept_result_parse,
    system_evaluation_save,
)
from annotation.activity import activity_record
from annotation.importers.records import CandidateRecord, TargetRecord, Where
from annotation.importers.report import ImportReport
from annotation.importers.writer import BenchmarkWriter
from annotation.models import (
    ActivityKind,
    Benchmark,
    Candidate,
    CandidateStage,
    Import,
    Target,
    TargetStage,
    normalize_candidate,
)
from crowdlex.statements import shaped_objects
from crowds.interface import backend_names, default_backend_name
from hits.preview import BatchPreview, batch_preview
from hits.services import HitsGenerationError, hits_generate
from schemes import get_scheme
from schemes.base import main_step

#: The stages in which a candidate needs nothing more: its judgment is in (or it was set aside).
SETTLED = (CandidateStage.FINAL, CandidateStage.DROPPED, CandidateStage.EXCLUDED)


class JudgingError(ValueError):
    """A complete evaluation cannot be proposed or started as asked; the message says why."""


def system_origin(system: str) -> str:
    """The import origin and candidate source of a system's substitutes."""
    return f"system:{system}"


def judging_check(*, benchmark: Benchmark) -> SystemEvaluator:
    """The evaluator, if it judges unscored substitutes; else ``JudgingError`` saying why not."""
    evaluator = evaluation_check(benchmark=benchmark)
    if not evaluator.judges_unscored:
        raise JudgingError(
            f"{benchmark.name} is a {benchmark.get_scheme_display()} benchmark: {evaluator.judging_refusal}"
        )
    return evaluator


def _top_k_check(top_k: int) -> None:
    limit: int = settings.EVALUATION_JUDGE_MAX_TOP_K
    if not 1 <= top_k <= limit:
        raise JudgingError(f"top-k must be between 1 and {limit} (EVALUATION_JUDGE_MAX_TOP_K), got {top_k}")


class _Rollback(Exception):
    """Ends the savepoint in which the proposal's batch is priced."""


def _add_candidates(
    *, benchmark: Benchmark, evaluation: SystemEvaluation, substitutes: dict[int, list[str]], provenance: dict[str, Any]
) -> tuple[Import, list[int]]:
    """Write the substitutes as candidates of their targets under the system's origin (one import,
    its provenance kept) and send their targets back to the first stage, so the pipeline takes them
    through the benchmark's steps. Called inside the caller's transaction with the benchmark locked."""
    origin = system_origin(evaluation.system)
    import_record, created = Import.objects.get_or_create(benchmark=benchmark, origin=origin)
    if not created and import_record.provenance:
        earlier = list(import_record.provenance.get("earlier", []))
        previous = {key: value for key, value in import_record.provenance.items() if key != "earlier"}
        provenance = {**provenance, "earlier": [*earlier, previous]}
    import_record.provenance = provenance
    import_record.save(update_fields=["provenance"])
    report = ImportReport(benchmark=benchmark.name, origin=origin, format=origin)
    writer = BenchmarkWriter(benchmark=benchmark, import_record=import_record, report=report)
    targets = Target.objects.filter(benchmark=benchmark, pk__in=list(substitutes)).select_related("context")
    writer.add_all(
        TargetRecord(
            where=(where := Where(file=evaluation.result_name or origin, item=f"target {target.pk}")),
            context_text=target.context.text,
            word=target.word,
            offset=target.offset,
            pos=target.pos,
            lemma=target.lemma,
            candidates=[
                CandidateRecord(
                    text=text, normalized=normalize_candidate(text), sources=[origin], labels=[], where=where
                )
                for text in substitutes[target.pk]
            ],
        )
        for target in targets.order_by("pk")
    )
    wanted = {(target_pk, normalize_candidate(text)) for target_pk, texts in substitutes.items() for text in texts}
    rows = Candidate.objects.filter(
        target_id__in=list(substitutes), normalized__in=sorted({key for _, key in wanted})
    ).values_list("id", "target_id", "normalized")
    candidate_ids = sorted(pk for pk, target_pk, key in rows if (target_pk, key) in wanted)
    Target.objects.filter(pk__in=list(substitutes)).exclude(stage=TargetStage.REDUCE).update(stage=TargetStage.REDUCE)
    return import_record, candidate_ids


def _batch_arguments(*, benchmark: Benchmark, judgement: UnscoredJudgement, candidate_ids: list[int]) -> dict[str, Any]:
    return {
        "step": main_step(get_scheme(benchmark).steps),
        "seed": benchmark.seed,
        "targets": sorted(int(pk) for pk in judgement.substitutes),
        "backend": judgement.backend,
        "candidates": candidate_ids,
    }


def _substitutes(judgement: UnscoredJudgement) -> dict[int, list[str]]:
    return {int(pk): list(texts) for pk, texts in judgement.substitutes.items()}


def _provenance(*, evaluation: SystemEvaluation, top_k: int, by: Any, judgement_id: int | None) -> dict[str, Any]:
    return {
        "system": evaluation.system,
        "result_file": evaluation.result_name,
        "sha256": evaluation.result_sha256,
        "top_k": top_k,
        "split": evaluation.split,
        "added_at": timezone.now().isoformat(),
        "added_by": by.get_username() if isinstance(by, User) else "",
        "judgement": judgement_id,
    }


def judgement_propose(
    *,
    evaluation: SystemEvaluation,
    top_k: int = 10,
    backend: str | None = None,
    created_by: User | AnonymousUser | None = None,
    save: bool = True,
) -> UnscoredJudgement:
    """Find the saved system's top-``top_k`` substitutes that the benchmark has not scored and price
    the batch that would judge them, writing nothing but the proposal.

    The price is that of the very batch ``judgement_start`` creates: the candidates are written and
    the batch planned (``hits.preview.batch_preview``) inside a savepoint that is then rolled back.
    Raises ``JudgingError`` when the scheme's evaluation cannot judge, the result was not kept,
    nothing is left unscored, or there is more than ``EVALUATION_JUDGE_MAX_SUBSTITUTES``.
    ``save`` False: a dry run, the proposal returned unsaved (``evaluation`` may be unsaved too).
    """
    benchmark = evaluation.benchmark
    evaluator = judging_check(benchmark=benchmark)
    _top_k_check(top_k)
    backend = backend or default_backend_name()
    if backend not in backend_names():
        raise JudgingError(f"backend must be one of {', '.join(backend_names())}, got {backend!r}")
    if evaluation.result is None:
        raise JudgingError(
            f"the result file of {evaluation.system} was not kept (saved before results were): "
            "evaluate and save it again"
        )
    parsed = kept_result_parse(evaluation=evaluation)
    found = evaluator.unscored(benchmark, parsed, top_k=top_k, split=evaluation.split or None)
    count = sum(len(texts) for texts in found.values())
    if not count:
        raise JudgingError(
            f"nothing to judge: every one of the top {top_k} substitutes of {evaluation.system} is scored "
            "or already a candidate"
        )
    limit: int = settings.EVALUATION_JUDGE_MAX_SUBSTITUTES
    if count > limit:
        raise JudgingError(
            f"{count:,} unscored substitutes is more than {limit:,} (EVALUATION_JUDGE_MAX_SUBSTITUTES): "
            "judge a smaller top-k"
        )
    judgement = UnscoredJudgement(
        benchmark=benchmark,
        evaluation=evaluation,
        top_k=top_k,
        backend=backend,
        substitutes={str(pk): texts for pk, texts in sorted(found.items())},
        substitute_count=count,
        created_by=created_by if isinstance(created_by, User) else None,
    )
    judgement.cost = _price(judgement=judgement).as_dict()
    if save:
        judgement.save()
    return judgement


def _price(*, judgement: UnscoredJudgement) -> BatchPreview:
    benchmark = judgement.benchmark
    preview: BatchPreview | None = None
    try:
        with transaction.atomic():
            locked = Benchmark.objects.select_for_update(no_key=True).get(pk=benchmark.pk)
            _, candidate_ids = _add_candidates(
                benchmark=locked,
                evaluation=judgement.evaluation,
                substitutes=_substitutes(judgement),
                provenance={},
            )
            preview = batch_preview(
                benchmark=locked,
                **_batch_arguments(benchmark=locked, judgement=judgement, candidate_ids=candidate_ids),
            )
            raise _Rollback
    except _Rollback:
        pass
    except HitsGenerationError as exc:
        raise JudgingError(str(exc)) from exc
    assert preview is not None
    return preview


def judgement_start(*, judgement: UnscoredJudgement, by: User | AnonymousUser | None = None) -> UnscoredJudgement:
    """Add the proposed substitutes as candidates (source ``system:<name>``, one import with its
    provenance) and create the batch that judges them under the benchmark's rules: the scheme's
    first step of its own, with its controls, spam filtering and advancement, holding only these
    candidates; later steps (or a stopping policy's rounds) follow as for any batch. On the local
    queue the batch is open at once; on a paid crowd it is published from its page.

    All or nothing, in one transaction holding the benchmark's row lock and the judgement's (a
    second start of the same proposal finds it started and is refused).
    """
    with transaction.atomic():
        benchmark = Benchmark.objects.select_for_update(no_key=True).get(pk=judgement.benchmark_id)
        locked = UnscoredJudgement.objects.select_for_update().select_related("evaluation").get(pk=judgement.pk)
        if locked.status != JudgementStatus.PROPOSED:
            raise JudgingError(f"the judging of {locked.evaluation.system}'s substitutes has started already")
        judging_check(benchmark=benchmark)
        before = benchmark_version(benchmark=benchmark)
        provenance = _provenance(evaluation=locked.evaluation, top_k=locked.top_k, by=by, judgement_id=locked.pk)
        import_record, candidate_ids = _add_candidates(
            benchmark=benchmark, evaluation=locked.evaluation, substitutes=_substitutes(locked), provenance=provenance
        )
        try:
            batch = hits_generate(
                benchmark=benchmark,
                created_by=by if isinstance(by, User) else None,
                **_batch_arguments(benchmark=benchmark, judgement=locked, candidate_ids=candidate_ids),
            )
        except HitsGenerationError as exc:
            raise JudgingError(str(exc)) from exc
        locked.status = JudgementStatus.STARTED
        locked.import_record = import_record
        locked.batch = batch
        locked.candidate_ids = candidate_ids
        locked.version_before = before.as_dict()
        locked.started_at = timezone.now()
        locked.save()
        activity_record(
            benchmark=benchmark,
            kind=ActivityKind.IMPORTED,
            summary=f"{len(candidate_ids)} unscored substitutes of {locked.evaluation.system} added as candidates "
            f"and sent to be judged in batch {batch.pk}",
            by=by,
            result={"origin": import_record.origin, "candidates": len(candidate_ids), "batch": batch.pk},
        )
    return locked


@dataclass(frozen=True)
class JudgementProgress:
    """How far a started judgement is: its candidates settled (judged, or set aside) of all."""

    settled: int
    total: int

    @property
    def done(self) -> bool:
        return self.settled >= self.total


def judgement_progress(*, judgement: UnscoredJudgement) -> JudgementProgress:
    ids = list(judgement.candidate_ids)
    if judgement.status == JudgementStatus.DONE:
        return JudgementProgress(settled=len(ids), total=len(ids))
    unsettled = Candidate.objects.filter(pk__in=ids).exclude(stage__in=SETTLED).count()
    return JudgementProgress(settled=len(ids) - unsettled, total=len(ids))


def bootstrap_options() -> BootstrapOptions:
    """The bootstrap of every complete evaluation, from its settings (docs/evaluation.md)."""
    return BootstrapOptions(
        resamples=settings.EVALUATION_BOOTSTRAP_RESAMPLES,
        seed=settings.EVALUATION_BOOTSTRAP_SEED,
        level=settings.EVALUATION_BOOTSTRAP_LEVEL_PERCENT / 100,
    )


def judgement_report(*, judgement: UnscoredJudgement) -> UnscoredJudgement:
    """The judgement with its report once every one of its candidates is settled: the lenient and
    strict figures on the benchmark as it stood before the candidates were added, the complete
    ones on the benchmark as it stands then (its version kept), each with bootstrap intervals over
    targets. Computed once, at the first call after the last candidate settled, and kept; before
    that, the judgement as it is (``judgement_progress`` says how far). Idempotent: the row is
    locked while the report is written, and a report already kept is returned."""
    if judgement.status != JudgementStatus.STARTED or not judgement_progress(judgement=judgement).done:
        return judgement
    with transaction.atomic():
        locked = UnscoredJudgement.objects.select_for_update().select_related("evaluation").get(pk=judgement.pk)
        if locked.status != JudgementStatus.STARTED:
            return locked
        benchmark = locked.benchmark
        evaluator = evaluation_check(benchmark=benchmark)
        after = benchmark_version(benchmark=benchmark)
        before = BenchmarkVersion.from_dict(locked.version_before) or after
        locked.report = evaluator.complete(
            benchmark,
            kept_result_parse(evaluation=locked.evaluation),
            before=before,
            after=after,
            split=locked.evaluation.split or None,
            bootstrap=bootstrap_options(),
        ) | {"bootstrap": {**vars(bootstrap_options())}}
        locked.version_after = after.as_dict()
        locked.status = JudgementStatus.DONE
        locked.finished_at = timezone.now()
        locked.save()
    return locked


def judgements_refresh(*, benchmark: Benchmark) -> list[UnscoredJudgement]:
    """The benchmark's judgements, newest first, each reported if it has just finished."""
    # Built by the ORM once per process (``crowdlex.statements.shaped_objects``): the evaluation page
    # reads them after every change.
    return [judgement_report(judgement=judgement) for judgement in shaped_objects(_judgements, benchmark.pk)]


def _judgements(benchmark_id: int) -> QuerySet[UnscoredJudgement]:
    return UnscoredJudgement.objects.filter(benchmark_id=benchmark_id).select_related("evaluation", "batch")


def system_judge_unscored(
    *,
    benchmark: Benchmark,
    system: str,
    result: KeptResult,
    figures: dict[str, Any],
    split: str | None = None,
    top_k: int = 10,
    backend: str | None = None,
    by: User | AnonymousUser | None = None,
    start: bool = True,
    dry_run: bool = False,
) -> UnscoredJudgement:
    """A system's figures saved (with its result file) and its unscored substitutes proposed, then
    started unless ``start`` is false (the page asks first, the command and the API have decided).
    ``dry_run``: nothing is saved, the proposal comes back unsaved with its cost."""
    judging_check(benchmark=benchmark)
    if dry_run:
        unsaved = SystemEvaluation(
            benchmark=benchmark,
            system=system.strip(),
            split=split or "",
            figures=figures,
            result_name=result.name,
            result_sha256=result.sha256,
            result=result.content,
        )
        return judgement_propose(evaluation=unsaved, top_k=top_k, backend=backend, save=False)
    saved = system_evaluation_save(
        benchmark=benchmark, system=system, figures=figures, split=split, created_by=by, result=result
    )
    proposal = judgement_propose(evaluation=saved, top_k=top_k, backend=backend, created_by=by)
    return judgement_start(judgement=proposal, by=by) if start else proposal


def evaluation_find(*, benchmark: Benchmark, system: str, split: str | None = None) -> SystemEvaluation:
    """The saved evaluation of ``system`` (on ``split``); ``JudgingError`` naming it when there is none."""
    found = SystemEvaluation.objects.filter(benchmark=benchmark, system=system.strip(), split=split or "").first()
    if found is None:
        where = f" on split {split}" if split else ""
        raise JudgingError(f"no system named {system!r} is saved on {benchmark.name}{where}")
    return found


__all__ = [
    "JudgementProgress",
    "JudgingError",
    "bootstrap_options",
    "evaluation_find",
    "judgement_progress",
    "judgement_propose",
    "judgement_report",
    "judgement_start",
    "judgements_refresh",
    "judging_check",
    "system_judge_unscored",
    "system_origin",
]
