"""The CSV exports written a batch at a time (labels-csv, candidates-csv, answers-csv, and answers-jsonl
from the same rows) give the bytes of a straightforward reference: every row built from the models
one at a time, the counts grouped from the labels, the posteriors and reliabilities fitted afresh,
each row written by ``SpreadsheetSafeWriter``. For every scheme, with commas, quotes, line breaks,
other scripts and formula triggers in every text a row shows; with a re-annotation marked (the counts
grouped from the labels rather than read from the tallies), decisions applied, an excluded candidate
and a split. The statements an export runs do not grow with the data, and the fits are kept until a
change names a target (docs/design.md §7, "Whole CSV downloads")."""

from __future__ import annotations

import io
import json
from collections import Counter
from typing import Any
from unittest import mock

import numpy as np
import pytest
from django.db import connection
from django.db.models import TextField
from django.db.models.functions import Cast, Coalesce
from django.test.utils import CaptureQueriesContext

from analysis import services
from analysis.aggregation import DAWID_SKENE, MACE
from analysis.exports.answers import ANSWER_COLUMNS, counts, submitted_answers
from analysis.exports.base import benchmark_label_set, benchmark_worker_names
from analysis.exports.tables import CANDIDATE_COLUMNS, LABEL_COLUMNS
from analysis.pseudonyms import WorkerNames
from analysis.selectors import benchmark_candidates, benchmark_valid_labels
from analysis.services.aggregation import benchmark_aggregation
from analysis.services.reports import benchmark_data
from annotation.models import Benchmark, Candidate, Context, Label, LabelValue, Target, Worker
from annotation.tallies import tallies_benchmark_recount
from crowdlex.spreadsheet import SpreadsheetSafeWriter
from hits.models import HITItem
from hits.services import assignment_claim_next, assignment_submit, hits_generate
from hits.services.flags import candidate_exclude
from review.adjudication import candidate_overrides, overrides_applied
from review.adjudication.services import candidate_override_set, overrides_apply_set
from schemes.scores import DEFAULT_THRESHOLDS, category_of, override_score
from tests.analysis.labelled import labelled_benchmark
from tests.base import Cast as TheCast
from tests.hits.factories import make_target
from tests.hits.submitted_work import generation_work
from tests.scheme_benchmarks import BENCHMARK_SCHEMES, scheme_benchmark

pytestmark = pytest.mark.django_db

# Texts a CSV must quote, escape or neutralise: every text a row shows takes one of them.
AWKWARD = (
    '=HYPERLINK("https://evil.example","click")',
    "-walked, then ran",
    '+said "hello"',
    "@home\nand away",
    " =1+1",
    "\tindented",
    "\rreturned",
    "-1",
    "日本語の言葉",
    "Ελληνικά; «λέξη»",
    "كلمة",
    "plain",
)


def _awkward(number: int) -> str:
    return AWKWARD[number % len(AWKWARD)]


def _make_awkward(benchmark: Benchmark) -> None:
    """Every text of the benchmark that an export row shows made awkward, in place."""
    for number, candidate in enumerate(Candidate.objects.filter(target__benchmark=benchmark).order_by("pk")):
        Candidate.objects.filter(pk=candidate.pk).update(text=_awkward(number), external_id=_awkward(number + 3))
    for number, target in enumerate(Target.objects.filter(benchmark=benchmark).order_by("pk")):
        Target.objects.filter(pk=target.pk).update(word=_awkward(number + 1), external_id=_awkward(number + 5))
    for number, context in enumerate(Context.objects.filter(benchmark=benchmark).order_by("pk")):
        Context.objects.filter(pk=context.pk).update(external_id=_awkward(number + 7))
    for number, item in enumerate(HITItem.objects.filter(hit__batch__benchmark=benchmark).order_by("pk")):
        HITItem.objects.filter(pk=item.pk).update(text=_awkward(number + 2))
    for number, label in enumerate(Label.objects.filter(candidate__target__benchmark=benchmark).order_by("pk")):
        Label.objects.filter(pk=label.pk).update(origin=_awkward(number + 4) if label.assignment_id is None else "")


def _written(rows: list[list[Any]], columns: tuple[str, ...]) -> str:
    out = io.StringIO()
    writer = SpreadsheetSafeWriter(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(row)
    return out.getvalue()


def _exported(benchmark: Benchmark, format: str, split: str | None = None, raw: bool = False) -> str:
    out = io.StringIO()
    services.benchmark_export(benchmark=benchmark, format=format, out=out, split=split, raw_workers=raw)
    return out.getvalue()


def _rounded(value: float) -> float | None:
    return None if np.isnan(value) else round(float(value), 6)


def _fitted_afresh(benchmark: Benchmark, split: str | None) -> tuple[dict[int, tuple[Any, Any]], dict[int, Any]]:
    """Each candidate's and each worker's (Dawid-Skene, MACE) figure, fitted now."""
    data = benchmark_data(benchmark=benchmark, split=split)
    fits = [benchmark_aggregation(benchmark=benchmark, method=method, data=data) for method in (DAWID_SKENE, MACE)]
    posteriors = {
        int(candidate): (_rounded(first), _rounded(second))
        for candidate, first, second in zip(fits[0].candidate_ids, fits[0].posterior, fits[1].posterior, strict=True)
    }
    reliability = {
        int(worker): (_rounded(first), _rounded(second))
        for worker, first, second in zip(fits[0].worker_ids, fits[0].reliability, fits[1].reliability, strict=True)
    }
    return posteriors, reliability


def _worker_name(workers: WorkerNames, worker: Worker | None) -> str:
    return workers(f"{worker.kind}:{worker.external_id}" if worker is not None else None)


def reference_labels(benchmark: Benchmark, split: str | None = None, raw: bool = False) -> str:
    workers = benchmark_worker_names(benchmark=benchmark, raw_workers=raw)
    labels = (
        benchmark_valid_labels(benchmark=benchmark, split=split)
        .select_related("candidate__target", "worker")
        .annotate(time=Cast(Coalesce("assignment__submitted_at", "created_at"), TextField()))
        .order_by("candidate__target_id", "candidate_id", "id")
    )
    rows = [
        [
            label.pk,
            label.candidate_id,
            label.candidate.external_id,
            label.candidate.text,
            label.candidate.target_id,
            label.candidate.target.word,
            label.candidate.target.context_id,
            _worker_name(workers, label.worker),
            label.assignment_id,
            label.step,
            label.value,
            label.raw_value,
            label.origin,
            label.position,
            label.time,  # type: ignore[attr-defined]
        ]
        for label in labels
    ]
    return _written(rows, LABEL_COLUMNS)


def reference_candidates(benchmark: Benchmark, split: str | None = None, raw: bool = False) -> str:
    tallies: dict[int, Counter[str]] = {}
    for candidate_id, value in benchmark_label_set(benchmark, split).values_list("candidate_id", "value"):
        tallies.setdefault(candidate_id, Counter())[value] += 1
    posteriors, _ = _fitted_afresh(benchmark, split)
    decisions = candidate_overrides(benchmark=benchmark)
    applied = overrides_applied(benchmark=benchmark)
    rows = []
    for candidate in (
        benchmark_candidates(benchmark=benchmark, split=split).select_related("target").order_by("target_id", "id")
    ):
        tally = tallies.get(candidate.pk, Counter())
        accepts, rejects, abstains = (tally[LabelValue.ACCEPT], tally[LabelValue.REJECT], tally[LabelValue.ABSTAIN])
        labels = accepts + rejects + abstains
        score = accepts / labels if labels else None
        decision, reason = decisions.get(candidate.pk, ("", ""))
        if applied and decision:
            score = override_score(decision, DEFAULT_THRESHOLDS)
        rows.append(
            [
                candidate.pk,
                candidate.external_id,
                candidate.target_id,
                candidate.target.external_id,
                candidate.target.word,
                candidate.target.pos,
                candidate.target.context_id,
                candidate.text,
                ";".join(candidate.sources or []),
                candidate.stage,
                score,
                accepts,
                rejects,
                abstains,
                labels,
                category_of(score, DEFAULT_THRESHOLDS),
                *posteriors.get(candidate.pk, (None, None)),
                decision,
                reason,
            ]
        )
    return _written(rows, CANDIDATE_COLUMNS)


def _reference_answers(benchmark: Benchmark, split: str | None, raw: bool) -> list[list[Any]]:
    workers = benchmark_worker_names(benchmark=benchmark, raw_workers=raw)
    _, reliability = _fitted_afresh(benchmark, split)
    answers = (
        submitted_answers(benchmark=benchmark, split=split)
        .select_related("assignment__hit__batch", "assignment__worker", "assignment__hit__target__context", "item")
        .annotate(submitted_text=Cast("assignment__submitted_at", TextField()))
        .order_by("assignment_id", "item__position", "item_id")
    )
    rows = []
    for answer in answers:
        assignment, item = answer.assignment, answer.item
        hit, target = assignment.hit, assignment.hit.target
        rows.append(
            [
                benchmark.name,
                hit.batch_id,
                hit.batch.step,
                hit.pk,
                assignment.pk,
                _worker_name(workers, assignment.worker),
                assignment.worker.kind,
                target.pk,
                target.external_id,
                target.word,
                target.context_id,
                target.context.external_id,
                item.pk,
                item.position,
                item.kind,
                item.control,
                item.candidate_id,
                item.text if item.candidate_id is not None or item.control else None,
                answer.value,
                answer.data,
                counts(
                    status=assignment.status,
                    filtered=assignment.filtered,
                    is_confirmed=assignment.external_id == "" or assignment.external_status != "",
                ),
                assignment.status,
                answer.submitted_text,  # type: ignore[attr-defined]
                assignment.seconds_on_page,
                *reliability.get(assignment.worker_id, (None, None)),
            ]
        )
    return rows


def reference_answers_csv(benchmark: Benchmark, split: str | None = None, raw: bool = False) -> str:
    rows = _reference_answers(benchmark, split, raw)
    data = ANSWER_COLUMNS.index("data")
    for row in rows:
        row[data] = "" if row[data] is None else json.dumps(row[data], ensure_ascii=False, separators=(",", ":"))
    return _written(rows, ANSWER_COLUMNS)


def reference_answers_jsonl(benchmark: Benchmark, split: str | None = None, raw: bool = False) -> str:
    rows = _reference_answers(benchmark, split, raw)
    return "".join(json.dumps(dict(zip(ANSWER_COLUMNS, row, strict=True)), ensure_ascii=False) + "\n" for row in rows)


REFERENCES = {
    "labels-csv": reference_labels,
    "candidates-csv": reference_candidates,
    "answers-csv": reference_answers_csv,
    "answers-jsonl": reference_answers_jsonl,
}


def _check_every_format(benchmark: Benchmark, split: str | None = None, raw: bool = False) -> list[str]:
    """Each format of REFERENCES the benchmark's scheme offers, exported twice (the second time with
    the fits kept), equals its reference (workers named by raw ids with ``raw``); the formats compared."""
    from analysis.exports import export_formats

    offered = [found.name for found in export_formats(benchmark) if found.name in REFERENCES]
    for format in offered:
        expected = REFERENCES[format](benchmark, split, raw)
        for _ in range(2):
            assert _exported(benchmark, format, split, raw) == expected, (benchmark.scheme, format, split)
    return offered


def _neutralised_somewhere(text: str) -> None:
    # The data did hold cells a spreadsheet would run: the comparison covered neutralising them.
    assert "'=HYPERLINK" in text or "'-walked" in text or "'+said" in text or "'@home" in text


@pytest.mark.parametrize("scheme", BENCHMARK_SCHEMES)
def test_every_schemes_exports_equal_the_reference_with_awkward_texts(scheme: str, cast: TheCast) -> None:
    benchmark, _ = scheme_benchmark(scheme, cast)
    _make_awkward(benchmark)
    offered = _check_every_format(benchmark)
    assert {"answers-csv", "answers-jsonl"} <= set(offered)
    _neutralised_somewhere(_exported(benchmark, "answers-csv"))
    if scheme in ("swords", "prolex"):
        assert {"labels-csv", "candidates-csv"} <= set(offered)
        _neutralised_somewhere(_exported(benchmark, "candidates-csv"))
        _neutralised_somewhere(_exported(benchmark, "labels-csv"))


def test_the_generation_tasks_answers_equal_the_reference(cast: TheCast) -> None:
    benchmark, _ = generation_work(cast)
    _make_awkward(benchmark)
    assert "answers-csv" in _check_every_format(benchmark)
    assert _exported(benchmark, "answers-csv").count("\n") > 2


def _imported(name: str) -> Benchmark:
    """Imported labels by imported workers whose ids are awkward too, a target in each split."""
    targets = [
        (
            _awkward(n),
            "verb" if n % 2 else "noun",
            [(_awkward(n + c), ["coinco", "thesaurus"][: 1 + c % 2], "AARU"[c:] + "RA") for c in range(4)],
        )
        for n in range(4)
    ]
    benchmark = labelled_benchmark(name, targets, workers=["=w1", "w,2", 'w"3', "w\n4", "w5", "w6"])
    Worker.objects.filter(external_id="w5").update(external_id="-5")
    return benchmark


def _submitted(benchmark: Benchmark, cast: TheCast) -> None:
    """Work collected on the platform as well: alice accepts all, bob rejects the distractors only."""
    make_target(benchmark, word="+sat", candidates=["perched, ok", '"rested"', "=squatted"])
    hits_generate(benchmark=benchmark, step=2, seed=1, assignments_per_hit=2)
    for user in (cast.alice, cast.bob):
        while (claim := assignment_claim_next(worker=user.worker, benchmark=benchmark)) is not None:
            items = HITItem.objects.filter(hit=claim.hit)
            assignment_submit(
                assignment=claim,
                answers={item.pk: "reject" if user == cast.bob and item.control else "accept" for item in items},
            )


def test_swords_tables_equal_the_reference_with_decisions_exclusions_splits_and_a_reannotation(
    cast: TheCast,
) -> None:
    benchmark = _imported("awkward-imported")
    _submitted(benchmark, cast)
    _make_awkward(benchmark)
    # Raw ids name workers as they are: awkward ones too.
    _check_every_format(benchmark, raw=True)
    assert "imported:=w1" in _exported(benchmark, "labels-csv", raw=True)
    candidates = list(Candidate.objects.filter(target__benchmark=benchmark).order_by("pk"))
    candidate_exclude(candidate=candidates[1])
    candidate_override_set(candidate=candidates[2], decision="acceptable", reason='=looks right, "mostly"')
    candidate_override_set(candidate=candidates[5], decision="inconceivable", reason="@no")
    services.benchmark_split_seeded(benchmark=benchmark, shares=[("test", 0.5), ("train", 0.5)], seed=3)
    benchmark.refresh_from_db()
    for applied in (False, True):
        overrides_apply_set(benchmark=benchmark, apply=applied)
        for split in (None, "test"):
            _check_every_format(benchmark, split)
            assert _exported(benchmark, "labels-csv", split).count("\n") > 5
    # A second label set marked as a re-annotation: the table's counts leave it out, the tallies do not.
    Label.objects.bulk_create(
        Label(candidate=candidate, value=LabelValue.REJECT, origin="reannotation", position=0)
        for candidate in candidates[1:]
    )
    tallies_benchmark_recount(benchmark_id=benchmark.pk)
    services.benchmark_reannotation_set(benchmark=benchmark, origin="reannotation")
    for split in (None, "test"):
        _check_every_format(benchmark, split)
    _neutralised_somewhere(_exported(benchmark, "candidates-csv"))
    assert "'=looks right" in _exported(benchmark, "candidates-csv")


def _statements(benchmark: Benchmark, format: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        _exported(benchmark, format)
    return len(captured.captured_queries)


@pytest.mark.parametrize("format", ["labels-csv", "candidates-csv", "answers-csv", "answers-jsonl"])
def test_an_exports_statements_do_not_grow_with_the_data(format: str, cast: TheCast, settings: Any) -> None:
    small = _imported("small-imported")
    larger = labelled_benchmark(
        "larger-imported",
        [
            (f"word{n}", "verb", [(f"sub{n}-{c}", ["coinco"], "ARUA"[: 1 + (n + c) % 4] * 3) for c in range(9)])
            for n in range(40)
        ],
        workers=[f"w{n}" for n in range(12)],
    )
    for benchmark in (small, larger):
        _submitted(benchmark, cast)
    assert Label.objects.filter(benchmark=larger).count() > 4 * Label.objects.filter(benchmark=small).count()
    # A fetch of a few rows at a time: fetches are not statements, and rows come in many of them.
    with mock.patch("analysis.exports.tables.CSV_BATCH", 3), mock.patch("analysis.selectors.CHUNK_SIZE", 3):
        # The first export fits the models, the second reads the fits kept.
        first = [_statements(benchmark, format) for benchmark in (small, larger)]
        kept = [_statements(benchmark, format) for benchmark in (small, larger)]
    assert first[0] == first[1] and kept[0] == kept[1], (first, kept)
    assert kept[0] < first[0]


def test_the_fits_are_kept_until_a_change_names_a_target(cast: TheCast) -> None:
    benchmark = _imported("kept-fits")
    _submitted(benchmark, cast)
    fitted = "analysis.services.aggregation.benchmark_aggregation"
    expected, answers = reference_candidates(benchmark), reference_answers_csv(benchmark)
    assert _exported(benchmark, "candidates-csv") == expected
    # A direct download is an entry of the activity log, which names no target: the fits stay.
    services.export_download_record(benchmark=benchmark, format="candidates-csv")
    with mock.patch(fitted, side_effect=AssertionError("fitted again")):
        assert _exported(benchmark, "candidates-csv") == expected
        assert _exported(benchmark, "answers-csv") == answers
    # More work submitted names its targets: the posteriors are fitted again and move.
    make_target(benchmark, word="sat", candidates=["perched", "rested"])
    hits_generate(benchmark=benchmark, step=2, seed=2, assignments_per_hit=1)
    claim = assignment_claim_next(worker=cast.carol.worker, benchmark=benchmark)
    assert claim is not None
    assignment_submit(assignment=claim, answers={item.pk: "reject" for item in HITItem.objects.filter(hit=claim.hit)})
    moved = reference_candidates(benchmark)
    assert moved != expected
    assert _exported(benchmark, "candidates-csv") == moved
    assert _exported(benchmark, "answers-csv") == reference_answers_csv(benchmark) != answers
