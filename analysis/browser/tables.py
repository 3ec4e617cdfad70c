"""The browser's five tables of a benchmark: items, candidates, labels, HITs and workers.

Scheme-blind: the scheme names its items (``progress_words``' noun where it has one: Smart Word
Suggestions' sentences, TSAR's instances; targets otherwise), its stages (``target_stage_names``,
``candidate_stage_names``), whether its item shows a context (``page.shows_context``); its figures
name the label values (``value_names``) and decide a candidate's score and category (``verdict``).
A page's cells take a fixed number of queries (one per kind of count), whatever the page holds.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, NamedTuple, TypeVar

from django.db.models import (
    BigIntegerField,
    Case,
    Count,
    Exists,
    F,
    FloatField,
    IntegerField,
    Model,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    TextField,
    Value,
    When,
)
from django.db.models.functions import Cast, Coalesce
from django.db.models.lookups import GreaterThan
from django.urls import reverse

from analysis.browser.core import Cell, Column, Context, CsvPlan, Filter, Table, date_range
from annotation.models import (
    Candidate,
    CandidateStage,
    CandidateTally,
    Label,
    LabelValue,
    PartOfSpeech,
    Target,
    TargetStage,
    Worker,
    WorkerKind,
    WorkerTally,
)
from crowdlex.dialect import JsonListHolds
from crowdlex.statements import shaped_rows
from hits.access import workers_visible_to
from hits.models import HIT, VALID_STATUSES, Assignment, Batch, BatchStatus, HITItem, confirmed
from hits.selectors import VALID_ASSIGNMENT
from review.models import WorkerFlag

T = TypeVar("T")

# A label counts when it was imported, or collected in an assignment spam filtering kept (docs/design.md §5).
VALID_LABEL = Q(assignment__isnull=True) | Q(assignment__filtered=False)
YES_NO = (("yes", "yes"), ("no", "no"))
# Characters of context shown on either side of a target.
SNIPPET = 40


def item_words(context: Context) -> tuple[str, str]:
    """(one, many) of what the scheme calls its item: "target"/"targets" unless it names them."""
    words = getattr(context.scheme, "progress_words", None)
    if words is None:
        return "target", "targets"
    many = str(words(context.scheme.settings(context.benchmark)).item_noun)
    return (many[:-1] if many.endswith("s") else many), many


_TARGET_STAGES = dict(TargetStage.choices)
_CANDIDATE_STAGES = dict(CandidateStage.choices)


def _target_stage(context: Context, value: str) -> str:
    return context.scheme.target_stage_names.get(value) or _TARGET_STAGES.get(value, value)


def _candidate_stage(context: Context, value: str) -> str:
    return context.scheme.candidate_stage_names.get(value) or _CANDIDATE_STAGES.get(value, value)


def _number(value: float | None, digits: int = 2) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _snippet(text: str, offset: int, word: str) -> str:
    before, after = text[:offset], text[offset + len(word) :]
    left = ("…" + before[-SNIPPET:]) if len(before) > SNIPPET else before
    right = (after[:SNIPPET] + "…") if len(after) > SNIPPET else after
    return f"{left}[{word}]{right}"


# Each table's rows, and what a page's cells count of them, as functions of the benchmark's id and
# a page's ids: their statements are built once per process (``crowdlex.statements``, docs/design.md
# §7, "Statements built once"), not by the ORM on every page. A page's rows are read as the values
# its cells show (a tuple a row, named below), never as models and the models joined to them.
class TargetRow(NamedTuple):
    pk: int
    word: str
    offset: int
    pos: str
    stage: str
    context_text: str


class CandidateRow(NamedTuple):
    pk: int
    text: str
    sources: list[str] | None
    stage: str
    target_id: int
    word: str


class LabelRow(NamedTuple):
    pk: int
    value: str
    origin: str
    created_at: Any
    candidate_id: int
    candidate_text: str
    target_id: int
    word: str
    worker_id: int | None
    worker: str | None
    assignment_id: int | None
    filtered: bool | None
    hit_id: int | None
    batch_id: int | None


class HitRow(NamedTuple):
    pk: int
    batch_id: int
    target_id: int
    part: int
    assignments_required: int
    status: str
    word: str


class WorkerRow(NamedTuple):
    pk: int
    external_id: str
    kind: str
    blocked: bool


def _targets(benchmark_id: int) -> QuerySet[Target]:
    # Only what the cells read.
    return (
        Target.objects.filter(benchmark_id=benchmark_id)
        .select_related("context")
        .only("word", "offset", "pos", "stage", "context__text")
    )


def _targets_by_id(benchmark_id: int, ids: list[int]) -> QuerySet[Any]:
    return _targets(benchmark_id).filter(pk__in=ids).values_list(*TargetRow._fields[:-1], "context__text")


def _candidates_by_target(ids: list[int]) -> QuerySet[Any]:
    return _grouped_rows(Candidate.objects.filter(target_id__in=ids), "target_id")


def _hits_by_target(ids: list[int]) -> QuerySet[Any]:
    return _grouped_rows(HIT.objects.filter(target_id__in=ids), "target_id")


def _candidates(benchmark_id: int) -> QuerySet[Candidate]:
    return (
        # By the candidate's own benchmark: one range of its index, whatever other benchmarks hold
        # (docs/design.md §7, "Candidates by benchmark").
        Candidate.objects.filter(benchmark_id=benchmark_id)
        .select_related("target")
        .only("text", "sources", "stage", "target__word")
    )


def _candidates_by_id(benchmark_id: int, ids: list[int]) -> QuerySet[Any]:
    return _candidates(benchmark_id).filter(pk__in=ids).values_list(*CandidateRow._fields[:-1], "target__word")


def _tallies_of(ids: list[int]) -> QuerySet[Any]:
    return CandidateTally.objects.filter(candidate_id__in=ids).values_list(
        "candidate_id", *(name.removeprefix("tally__") for name in _TALLY_FIELDS)
    )


def _labels(benchmark_id: int) -> QuerySet[Label]:
    # Only what the cells read: a CSV of a whole view builds these rows by the hundred thousand.
    return (
        # By the label's own benchmark: one range of its indexes, whatever other benchmarks hold.
        Label.objects.filter(benchmark_id=benchmark_id)
        .select_related("candidate__target", "worker", "assignment__hit")
        .only(
            "value",
            "origin",
            "created_at",
            "candidate__text",
            "candidate__target__word",
            "worker__external_id",
            "assignment__filtered",
            "assignment__hit__batch_id",
        )
    )


def _labels_by_id(benchmark_id: int, ids: list[int]) -> QuerySet[Any]:
    return (
        _labels(benchmark_id)
        .filter(pk__in=ids)
        .values_list(
            "pk",
            "value",
            "origin",
            "created_at",
            "candidate_id",
            "candidate__text",
            "candidate__target_id",
            "candidate__target__word",
            "worker_id",
            "worker__external_id",
            "assignment_id",
            "assignment__filtered",
            "assignment__hit_id",
            "assignment__hit__batch_id",
        )
    )


def _hits(benchmark_id: int) -> QuerySet[HIT]:
    # Only what the cells read.
    return (
        HIT.objects.filter(batch__benchmark_id=benchmark_id)
        .select_related("batch", "target")
        .only("batch_id", "target_id", "part", "assignments_required", "batch__status", "target__word")
    )


def _hits_by_id(benchmark_id: int, ids: list[int]) -> QuerySet[Any]:
    return _hits(benchmark_id).filter(pk__in=ids).values_list(*HitRow._fields[:-2], "batch__status", "target__word")


def _done_by_hit(ids: list[int]) -> QuerySet[Any]:
    return _grouped_rows(Assignment.objects.filter(VALID_ASSIGNMENT, hit_id__in=ids), "hit_id")


def _workers_by_id(ids: list[int]) -> QuerySet[Any]:
    # The ids are of the view's rows, read among the workers the reader may see.
    return Worker.objects.filter(pk__in=ids).values_list(*WorkerRow._fields)


def _worker_labels(benchmark_id: int, ids: list[int]) -> QuerySet[Any]:
    return WorkerTally.objects.filter(worker_id__in=ids, benchmark_id=benchmark_id).values_list("worker_id", "labels")


def _worker_work(benchmark_id: int, ids: list[int]) -> QuerySet[Any]:
    return (
        Assignment.objects.filter(worker_id__in=ids, hit__batch__benchmark_id=benchmark_id)
        .order_by()
        .values_list("worker_id")
        .annotate(n=Count("pk"), right=Sum("controls_correct"), total=Sum("controls_total"))
        .values_list("worker_id", "n", "right", "total")
    )


def _worker_flags(benchmark_id: int, ids: list[int]) -> QuerySet[Any]:
    flags = WorkerFlag.objects.filter(worker_id__in=ids, benchmark_id=benchmark_id, cleared_at__isnull=True)
    return _grouped_rows(flags, "worker_id")


class ItemsTable(Table):
    """The scheme's items: targets in their context, or the sentences or instances it names."""

    name: ClassVar[str] = "items"

    def title(self, context: Context) -> str:
        return item_words(context)[1].capitalize()

    def columns(self, context: Context) -> list[Column]:
        one = item_words(context)[0]
        columns = [
            Column("id", "Id", F("pk"), numeric=True),
            Column("item", one.capitalize(), F("word"), kind="text"),
        ]
        if context.scheme.page.shows_context:
            columns.append(Column("context", "Context", F("context__text"), kind="text"))
        columns += [
            Column("pos", "Part of speech", F("pos"), kind="text"),
            Column("stage", "Stage", F("stage"), kind="text"),
            Column("candidates", "Candidates", Count("candidates"), numeric=True),
            Column("hits", "HITs", Count("hits"), numeric=True),
        ]
        return columns

    def filters(self, context: Context) -> list[Filter]:
        stages = tuple((value, _target_stage(context, value)) for value, _ in TargetStage.choices)
        return [
            Filter("q", "Text", "text"),
            Filter("pos", "Part of speech", "choice", tuple(PartOfSpeech.choices)),
            Filter("stage", "Stage", "choice", stages),
            Filter("batch", "Batch", "int"),
            Filter("hit", "HIT", "int"),
        ]

    def rows(self, context: Context) -> QuerySet[Any]:
        return _targets(context.benchmark.pk)

    def by_ids(self, context: Context, ids: list[int]) -> list[Any]:
        return [TargetRow._make(row) for row in shaped_rows(_targets_by_id, context.benchmark.pk, ids)]

    def narrow(self, context: Context, rows: QuerySet[Any], key: str, value: Any) -> QuerySet[Any]:
        if key == "q":
            found = Q(word__icontains=value) | Q(lemma__icontains=value) | Q(context__text__icontains=value)
            return rows.filter(found | Q(pk=int(value)) if value.isdigit() and len(value) <= 9 else found)
        if key == "batch":
            return rows.filter(Exists(HIT.objects.filter(target=OuterRef("pk"), batch_id=value)))
        if key == "hit":
            return rows.filter(Exists(HIT.objects.filter(target=OuterRef("pk"), pk=value)))
        return rows.filter(**{key: value})

    def cells(self, context: Context, objects: Sequence[Any]) -> list[list[Cell]]:
        ids = [target.pk for target in objects]
        candidates = Counter(dict(shaped_rows(_candidates_by_target, ids))) if ids else Counter()
        hits = Counter(dict(shaped_rows(_hits_by_target, ids))) if ids else Counter()
        links, benchmark = context.links, context.benchmark
        shows_context = context.scheme.page.shows_context
        pos = _choices(Target, "pos")
        rows = []
        for target in objects:
            cells = [
                Cell(str(target.pk), links("target-detail", target.pk)),
                Cell(target.word, links("target-detail", target.pk)),
            ]
            if shows_context:
                cells.append(Cell(_snippet(target.context_text, target.offset, target.word), csv=target.context_text))
            cells += [
                Cell(pos(target.pos) if target.pos else ""),
                Cell(_target_stage(context, target.stage)),
                Cell(str(candidates[target.pk]), links.table(benchmark, "candidates", target=target.pk)),
                Cell(str(hits[target.pk]), links.table(benchmark, "hits", target=target.pk)),
            ]
            rows.append(cells)
        return rows

    def csv(self, context: Context) -> CsvPlan:
        shows_context = context.scheme.page.shows_context
        values = ["pk", "word", *(["context__text"] if shows_context else []), "pos", "stage"]
        pos = _choices(Target, "pos")
        stage = _named(lambda value: _target_stage(context, value))
        benchmark = context.benchmark
        held = Candidate.objects.filter(target__benchmark=benchmark)
        candidates = _read_once(lambda: dict(_grouped(held, "target_id")))
        hits = _read_once(lambda: dict(_grouped(HIT.objects.filter(target__benchmark=benchmark), "target_id")))

        def rows(batch: list[tuple[Any, ...]]) -> list[list[Any]]:
            counted, made = candidates(), hits()
            return [
                [*head, pos(kind) if kind else "", stage(state), counted.get(head[0], 0), made.get(head[0], 0)]
                for *head, kind, state in batch
            ]

        text = (1, 2, 3, 4) if shows_context else (1, 2, 3)
        return CsvPlan(values, rows, text)


def _grouped(rows: QuerySet[Any], key: str) -> list[tuple[int, int]]:
    """(key, rows) counted in one query."""
    return list(_grouped_rows(rows, key))


def _grouped_rows(rows: QuerySet[Any], key: str) -> QuerySet[Any]:
    return rows.order_by().values(key).annotate(n=Count("pk")).values_list(key, "n")


def _read_once(read: Callable[[], T]) -> Callable[[], T]:
    """``read``, run the first time the result is asked for and kept: a CSV's counts by row, read when
    its body is first read (not when the response is made) and once, whatever the rows' batches.

    A CSV reads a count of each row (a target's candidates, a HIT's valid assignments, a worker's
    work) as the page's cells do, grouped in one statement, but over the benchmark rather than a
    page's ids: a correlated subquery per row would be evaluated on every row a sort by an
    aggregate groups (hundreds of times a row), and those tables' rows number in the thousands."""
    kept: list[T] = []

    def once() -> T:
        if not kept:
            kept.append(read())
        return kept[0]

    return once


def _named(name: Callable[[str], str]) -> Callable[[str], str]:
    """``name``, asked once per distinct value of a download (a stage, a value: a handful)."""
    names: dict[str, str] = {}

    def named(value: str) -> str:
        found = names.get(value)
        if found is None:
            found = names[value] = name(value)
        return found

    return named


def _choices(model: type[Model], field_name: str) -> Callable[[str], str]:
    """What ``get_<field>_display`` shows for a value of the field."""
    found = model._meta.get_field(field_name)
    shown = {value: str(label) for value, label in getattr(found, "flatchoices", ())}
    return lambda value: shown.get(value, value)


# A candidate's kept tally (annotation.tallies) of valid labels by value, as read through the candidate.
_TALLY_FIELDS = ("tally__accepts", "tally__rejects", "tally__abstains")
_TALLY_VALUES = (LabelValue.ACCEPT, LabelValue.REJECT, LabelValue.ABSTAIN)


def _tally_key(accepts: Any, rejects: Any, abstains: Any) -> Any:
    """One number for a tally's three counts (each below a million): of plain counts, or of expressions."""
    return (accepts * _KEY_STEP + rejects) * _KEY_STEP + abstains


# Labels of one value a candidate may hold, and more, for the category's key.
_KEY_STEP = 1_000_000


def _tally_counts(tally: Sequence[int | None]) -> dict[str, int]:
    """Label value -> valid labels of a candidate's tally (accepts, rejects, abstains; None: no row)."""
    return {value: n for value, n in zip(_TALLY_VALUES, tally, strict=True) if n}


class CandidatesTable(Table):
    """Candidates with their sources, stage, valid labels, accepts, score and category in the scheme's words."""

    name: ClassVar[str] = "candidates"
    count_in_id_order: ClassVar[bool] = True

    def title(self, context: Context) -> str:
        return "Candidates"

    def columns(self, context: Context) -> list[Column]:
        # The counts are the candidates' kept tallies (annotation.tallies), read by a join of one
        # row per candidate: no sort groups the view's labels.
        labels = Coalesce(F("tally__labels"), 0)
        accepts = Coalesce(F("tally__accepts"), 0)
        score = Case(
            When(Q(stage=CandidateStage.EXCLUDED), then=Value(-2.0)),
            When(GreaterThan(labels, 0), then=Cast(accepts, FloatField()) / Cast(labels, FloatField())),
            default=Value(-1.0),
            output_field=FloatField(),
        )
        return [
            Column("id", "Id", F("pk"), numeric=True),
            Column("text", "Candidate", F("text"), kind="text"),
            Column("item", item_words(context)[0].capitalize(), F("target__word"), kind="text"),
            Column("sources", "Sources", Cast("sources", TextField()), kind="text"),
            Column("stage", "Stage", F("stage"), kind="text"),
            Column("labels", "Labels", labels, numeric=True),
            Column("accepts", context.value_name(LabelValue.ACCEPT).capitalize(), accepts, numeric=True),
            Column("score", "Score", score, kind="float", numeric=True),
            # The category follows the score, so it sorts by it.
            Column("category", "Category", score, kind="float"),
        ]

    def filters(self, context: Context) -> list[Filter]:
        stages = tuple((value, _candidate_stage(context, value)) for value, _ in CandidateStage.choices)
        return [
            Filter("q", "Text", "text"),
            # A list in a JSON column, adapted by the ORM.
            Filter("source", "Source", "text", parameter=False),
            Filter("stage", "Stage", "choice", stages),
            # The scheme's verdict on the tallies the view holds, read to narrow it.
            Filter("category", "Category", "text", last=True, parameter=False),
            Filter("target", "Target", "int"),
            Filter("batch", "Batch", "int"),
            Filter("hit", "HIT", "int"),
            Filter("worker", "Labelled by worker", "int"),
        ]

    def rows(self, context: Context) -> QuerySet[Any]:
        return _candidates(context.benchmark.pk)

    def by_ids(self, context: Context, ids: list[int]) -> list[Any]:
        return [CandidateRow._make(row) for row in shaped_rows(_candidates_by_id, context.benchmark.pk, ids)]

    def narrow(self, context: Context, rows: QuerySet[Any], key: str, value: Any) -> QuerySet[Any]:
        if key == "q":
            return rows.filter(text__icontains=value)
        if key == "source":
            return rows.filter(JsonListHolds("sources", value))
        if key == "stage":
            return rows.filter(stage=value)
        if key == "target":
            return rows.filter(target_id=value)
        if key in ("batch", "hit"):
            items = HITItem.objects.filter(
                candidate=OuterRef("pk"), **{"hit__batch_id" if key == "batch" else "hit_id": value}
            )
            return rows.filter(Exists(items))
        if key == "worker":
            return rows.filter(Exists(Label.objects.filter(candidate=OuterRef("pk"), worker_id=value)))
        # The category is the scheme's verdict on the counts, decided in Python once per distinct
        # stage and tally of the view (a few hundred, not a verdict per candidate), then kept by
        # each candidate's tally as one number.
        key = _tally_key(*(Cast(Coalesce(F(name), 0), BigIntegerField()) for name in _TALLY_FIELDS))
        keys: set[int] = set()
        excluded = False
        for stage, *tally in rows.order_by().values_list("stage", *_TALLY_FIELDS).distinct():
            if self._verdict(context, stage, _tally_counts(tally))[1] != value:
                continue
            if stage == CandidateStage.EXCLUDED:
                excluded = True
            else:
                keys.add(_tally_key(*(n or 0 for n in tally)))
        kept = Q(category_key__in=sorted(keys)) & ~Q(stage=CandidateStage.EXCLUDED)
        return rows.alias(category_key=key).filter(kept | Q(stage=CandidateStage.EXCLUDED) if excluded else kept)

    @staticmethod
    def _verdict(context: Context, stage: str, counts: dict[str, int]) -> tuple[float | None, str]:
        if stage == CandidateStage.EXCLUDED:
            return None, "excluded"
        return context.figures.verdict({value: counts.get(value, 0) for value in LabelValue.values} | counts)

    def cells(self, context: Context, objects: Sequence[Any]) -> list[list[Cell]]:
        ids = [row.pk for row in objects]
        counts = {pk: _tally_counts(tally) for pk, *tally in shaped_rows(_tallies_of, ids)} if ids else {}
        links, benchmark = context.links, context.benchmark
        rows = []
        for candidate in objects:
            found = counts.get(candidate.pk, {})
            score, category = self._verdict(context, candidate.stage, found)
            rows.append(
                [
                    Cell(str(candidate.pk), links.table(benchmark, "labels", candidate=candidate.pk)),
                    Cell(candidate.text, links.table(benchmark, "labels", candidate=candidate.pk)),
                    Cell(candidate.word, links("target-detail", candidate.target_id)),
                    Cell(", ".join(candidate.sources or []), csv=";".join(candidate.sources or [])),
                    Cell(_candidate_stage(context, candidate.stage)),
                    Cell(str(sum(found.values())), links.table(benchmark, "labels", candidate=candidate.pk)),
                    Cell(str(found.get(LabelValue.ACCEPT, 0))),
                    Cell(_number(score)),
                    Cell(category),
                ]
            )
        return rows

    def csv(self, context: Context) -> CsvPlan:
        stage_name = _named(lambda value: _candidate_stage(context, value))
        # The cells from the stage on, by stage and tally: a view holds a few hundred distinct ones.
        verdicts: dict[tuple[Any, ...], tuple[str, int, int, str, str]] = {}
        # The sources' cell by the stored list's text: a benchmark holds a handful of distinct lists,
        # so each is decoded once, not once a row.
        joined: dict[str, str] = {}

        def counted(key: tuple[Any, ...]) -> tuple[str, int, int, str, str]:
            stage, *tally = key
            found = _tally_counts(tally)
            score, category = self._verdict(context, stage, found)
            labels, accepts = sum(found.values()), found.get(LabelValue.ACCEPT, 0)
            kept = verdicts[key] = (stage_name(stage), labels, accepts, _number(score), category)
            return kept

        def sources(stored: str) -> str:
            found = joined.get(stored)
            if found is None:
                found = joined[stored] = ";".join(json.loads(stored) or [])
            return found

        def rows(batch: list[tuple[Any, ...]]) -> list[list[Any]]:
            return [
                [
                    row[0],
                    row[1],
                    row[2],
                    joined[row[3]] if row[3] in joined else sources(row[3]),
                    *(verdicts.get(row[4:]) or counted(row[4:])),
                ]
                for row in batch
            ]

        values = ["pk", "text", "target__word", Cast("sources", TextField()), "stage", *_TALLY_FIELDS]
        return CsvPlan(values, rows, (1, 2, 3, 4, 8))


class LabelsTable(Table):
    """Every label of the benchmark, imported or collected, with who gave it, where and when."""

    name: ClassVar[str] = "labels"
    count_in_id_order: ClassVar[bool] = True

    def title(self, context: Context) -> str:
        return "Labels"

    def columns(self, context: Context) -> list[Column]:
        return [
            Column("id", "Id", F("pk"), numeric=True),
            Column("value", "Value", F("value"), kind="text"),
            Column("candidate", "Candidate", F("candidate__text"), kind="text"),
            Column("item", item_words(context)[0].capitalize(), F("candidate__target__word"), kind="text"),
            Column("worker", "Worker", Coalesce(F("worker__external_id"), Value("")), kind="text"),
            Column("assignment", "Assignment", Coalesce(F("assignment_id"), Value(0)), numeric=True),
            Column("hit", "HIT", Coalesce(F("assignment__hit_id"), Value(0)), numeric=True),
            Column("batch", "Batch", Coalesce(F("assignment__hit__batch_id"), Value(0)), numeric=True),
            Column("origin", "Origin", F("origin"), kind="text"),
            Column(
                "counted",
                "Counts",
                Case(When(VALID_LABEL, then=Value(1)), default=Value(0), output_field=IntegerField()),
            ),
            Column("time", "Time", F("created_at"), kind="time"),
        ]

    def filters(self, context: Context) -> list[Filter]:
        values = tuple((value, context.value_name(value)) for value in LabelValue.values)
        return [
            Filter("q", "Candidate text", "text"),
            Filter("value", "Value", "choice", values),
            Filter("worker", "Worker", "int"),
            Filter("candidate", "Candidate", "int"),
            Filter("target", "Target", "int"),
            Filter("hit", "HIT", "int"),
            Filter("batch", "Batch", "int"),
            Filter("assignment", "Assignment", "int"),
            Filter("origin", "Origin", "text"),
            Filter("counted", "Counts", "choice", YES_NO),
            Filter("from", "From", "date"),
            Filter("to", "To", "date"),
        ]

    def rows(self, context: Context) -> QuerySet[Any]:
        return _labels(context.benchmark.pk)

    def by_ids(self, context: Context, ids: list[int]) -> list[Any]:
        return [LabelRow._make(row) for row in shaped_rows(_labels_by_id, context.benchmark.pk, ids)]

    def narrow(self, context: Context, rows: QuerySet[Any], key: str, value: Any) -> QuerySet[Any]:
        fields = {
            "value": "value",
            "worker": "worker_id",
            "candidate": "candidate_id",
            "target": "candidate__target_id",
            "hit": "assignment__hit_id",
            "batch": "assignment__hit__batch_id",
            "assignment": "assignment_id",
            "origin": "origin",
        }
        if key in fields:
            return rows.filter(**{fields[key]: value})
        if key == "q":
            return rows.filter(candidate__text__icontains=value)
        if key == "counted":
            return rows.filter(VALID_LABEL) if value == "yes" else rows.exclude(VALID_LABEL)
        return rows.filter(date_range("created_at", key, value))

    def cells(self, context: Context, objects: Sequence[Any]) -> list[list[Cell]]:
        links, benchmark = context.links, context.benchmark
        rows = []
        for label in objects:
            hit = label.hit_id
            counted = label.assignment_id is None or not label.filtered
            rows.append(
                [
                    Cell(str(label.pk)),
                    Cell(context.value_name(label.value), csv=label.value),
                    Cell(label.candidate_text, links.table(benchmark, "labels", candidate=label.candidate_id)),
                    Cell(label.word, links("target-detail", label.target_id)),
                    Cell(
                        label.worker or "",
                        links.table(benchmark, "labels", worker=label.worker_id) if label.worker_id else "",
                    ),
                    Cell(str(label.assignment_id or "")),
                    Cell(str(hit) if hit else "", links("hit-detail", hit) if hit else ""),
                    Cell(str(label.batch_id) if hit else "", links("batch-detail", label.batch_id) if hit else ""),
                    Cell(label.origin),
                    Cell("yes" if counted else "no (filtered)", csv="yes" if counted else "no"),
                    Cell(label.created_at.strftime("%Y-%m-%d %H:%M UTC"), csv=label.created_at.isoformat()),
                ]
            )
        return rows

    def csv(self, context: Context) -> CsvPlan:
        values = [
            "pk",
            "value",
            "candidate__text",
            "candidate__target__word",
            "worker__external_id",
            "assignment_id",
            "assignment__hit_id",
            "assignment__hit__batch_id",
            "origin",
            "assignment__filtered",
            "created_at",
        ]

        def rows(batch: list[tuple[Any, ...]]) -> list[list[Any]]:
            # A label with no assignment was imported: it counts, and has no HIT or batch.
            return [
                [
                    pk,
                    value,
                    text,
                    word,
                    worker or "",
                    assignment,
                    hit,
                    batch_id,
                    origin,
                    "no" if out else "yes",
                    at.isoformat(),
                ]
                for pk, value, text, word, worker, assignment, hit, batch_id, origin, out, at in batch
            ]

        return CsvPlan(values, rows, (1, 2, 3, 4, 8))


class HitsTable(Table):
    """HITs with their batch, item, batch status and assignments done of those needed."""

    name: ClassVar[str] = "hits"

    def title(self, context: Context) -> str:
        return "HITs"

    def columns(self, context: Context) -> list[Column]:
        valid = Q(assignments__status__in=VALID_STATUSES, assignments__filtered=False) & confirmed("assignments__")
        done = Count("assignments", filter=valid)
        return [
            Column("id", "Id", F("pk"), numeric=True),
            Column("batch", "Batch", F("batch_id"), numeric=True),
            Column("item", item_words(context)[0].capitalize(), F("target__word"), kind="text"),
            Column("part", "Part", F("part"), numeric=True),
            Column("status", "Batch status", F("batch__status"), kind="text"),
            Column("done", "Done", done, numeric=True),
            Column("needed", "Needed", F("assignments_required"), numeric=True),
        ]

    def filters(self, context: Context) -> list[Filter]:
        return [
            Filter("q", "Text", "text"),
            Filter("batch", "Batch", "int"),
            Filter("target", "Target", "int"),
            Filter("status", "Batch status", "choice", tuple(BatchStatus.choices)),
            Filter("worker", "Worked on by worker", "int"),
        ]

    def rows(self, context: Context) -> QuerySet[Any]:
        return _hits(context.benchmark.pk)

    def by_ids(self, context: Context, ids: list[int]) -> list[Any]:
        return [HitRow._make(row) for row in shaped_rows(_hits_by_id, context.benchmark.pk, ids)]

    def narrow(self, context: Context, rows: QuerySet[Any], key: str, value: Any) -> QuerySet[Any]:
        if key == "q":
            return rows.filter(target__word__icontains=value)
        if key == "worker":
            return rows.filter(Exists(Assignment.objects.filter(hit=OuterRef("pk"), worker_id=value)))
        return rows.filter(**{{"batch": "batch_id", "target": "target_id", "status": "batch__status"}[key]: value})

    def cells(self, context: Context, objects: Sequence[Any]) -> list[list[Cell]]:
        ids = [hit.pk for hit in objects]
        done = Counter(dict(shaped_rows(_done_by_hit, ids))) if ids else Counter()
        links, benchmark = context.links, context.benchmark
        status = _choices(Batch, "status")
        return [
            [
                Cell(str(hit.pk), links("hit-detail", hit.pk)),
                Cell(str(hit.batch_id), links.table(benchmark, "hits", batch=hit.batch_id)),
                # A HIT's item, and the candidates its page asks about.
                Cell(hit.word, links.table(benchmark, "items", hit=hit.pk)),
                Cell(str(hit.part + 1), links.table(benchmark, "candidates", hit=hit.pk)),
                Cell(status(hit.status)),
                Cell(str(done[hit.pk]), links.table(benchmark, "labels", hit=hit.pk)),
                Cell(str(hit.assignments_required)),
            ]
            for hit in objects
        ]

    def csv(self, context: Context) -> CsvPlan:
        values = ["pk", "batch_id", "target__word", "part", "batch__status", "assignments_required"]
        status = _choices(Batch, "status")
        valid = Assignment.objects.filter(VALID_ASSIGNMENT, hit__batch__benchmark=context.benchmark)
        done = _read_once(lambda: dict(_grouped(valid, "hit_id")))

        def rows(batch: list[tuple[Any, ...]]) -> list[list[Any]]:
            counted = done()
            return [
                [pk, batch_id, word, part + 1, status(state), counted.get(pk, 0), needed]
                for pk, batch_id, word, part, state, needed in batch
            ]

        return CsvPlan(values, rows, (2, 4))


class WorkersTable(Table):
    """The workers of the benchmark (hits.access: those with work in it), with their labels and
    assignments here, control accuracy, open flags and whether they are blocked."""

    name: ClassVar[str] = "workers"
    follows_reader: ClassVar[bool] = True

    def title(self, context: Context) -> str:
        return "Workers"

    def note(self, context: Context) -> tuple[str, str]:
        # Agreement and reliability are fitted over every label of the benchmark: the statistics
        # page computes them when asked, which no page of a table could afford per request.
        statistics = reverse("analysis-statistics", args=[context.benchmark.name])
        return "Each worker's agreement and reliability, where the scheme reports them", f"{statistics}?reliability=1"

    def _tally(self, context: Context) -> QuerySet[WorkerTally]:
        return WorkerTally.objects.filter(worker=OuterRef("pk"), benchmark=context.benchmark)

    def _flags(self, context: Context) -> QuerySet[WorkerFlag]:
        return WorkerFlag.objects.filter(worker=OuterRef("pk"), benchmark=context.benchmark, cleared_at__isnull=True)

    def columns(self, context: Context) -> list[Column]:
        benchmark = context.benchmark
        here = Q(assignments__hit__batch__benchmark=benchmark)
        right = Sum("assignments__controls_correct", filter=here)
        total = Sum("assignments__controls_total", filter=here)
        accuracy = Case(
            When(GreaterThan(Coalesce(total, 0), 0), then=Cast(right, FloatField()) / Cast(total, FloatField())),
            default=Value(-1.0),
            output_field=FloatField(),
        )
        open_flags = Q(flags__benchmark=benchmark, flags__cleared_at__isnull=True)
        return [
            Column("id", "Id", F("pk"), numeric=True),
            Column("worker", "Worker", F("external_id"), kind="text"),
            Column("kind", "Kind", F("kind"), kind="text"),
            Column("labels", "Labels", Coalesce(Subquery(self._tally(context).values("labels")), 0), numeric=True),
            Column("assignments", "Assignments", Count("assignments", filter=here), numeric=True),
            Column("accuracy", "Control accuracy", accuracy, kind="float", numeric=True),
            Column("flags", "Open flags", Count("flags", filter=open_flags), numeric=True),
            Column("blocked", "Blocked", Cast("blocked", IntegerField())),
        ]

    def filters(self, context: Context) -> list[Filter]:
        return [
            Filter("q", "Worker", "text"),
            Filter("kind", "Kind", "choice", tuple(WorkerKind.choices)),
            Filter("flagged", "Flagged", "choice", YES_NO),
            Filter("blocked", "Blocked", "choice", YES_NO),
        ]

    def rows(self, context: Context) -> QuerySet[Any]:
        # Built once a request: a page reads the rows twice (the view's ids, then those rows).
        return context.kept("workers", lambda: workers_visible_to(context.user, benchmark=context.benchmark))

    def narrow(self, context: Context, rows: QuerySet[Any], key: str, value: Any) -> QuerySet[Any]:
        if key == "q":
            return rows.filter(external_id__icontains=value)
        if key == "kind":
            return rows.filter(kind=value)
        if key == "flagged":
            flagged = Exists(self._flags(context))
            return rows.filter(flagged if value == "yes" else ~flagged)
        return rows.filter(blocked=value == "yes")

    def by_ids(self, context: Context, ids: list[int]) -> list[Any]:
        return [WorkerRow._make(row) for row in shaped_rows(_workers_by_id, ids)]

    def cells(self, context: Context, objects: Sequence[Any]) -> list[list[Cell]]:
        ids = [worker.pk for worker in objects]
        benchmark = context.benchmark
        labels: Counter[int] = Counter()
        work: dict[int, tuple[int, int, int]] = {}
        flags: Counter[int] = Counter()
        if ids:
            labels = Counter(dict(shaped_rows(_worker_labels, benchmark.pk, ids)))
            work = {
                worker_id: (n, right or 0, total or 0)
                for worker_id, n, right, total in shaped_rows(_worker_work, benchmark.pk, ids)
            }
            flags = Counter(dict(shaped_rows(_worker_flags, benchmark.pk, ids)))
        links = context.links
        kind = _choices(Worker, "kind")
        rows = []
        for worker in objects:
            assignments, right, total = work.get(worker.pk, (0, 0, 0))
            rows.append(
                [
                    Cell(str(worker.pk)),
                    Cell(worker.external_id, links.table(benchmark, "labels", worker=worker.pk)),
                    Cell(kind(worker.kind), csv=worker.kind),
                    Cell(str(labels[worker.pk]), links.table(benchmark, "labels", worker=worker.pk)),
                    Cell(str(assignments), links.table(benchmark, "hits", worker=worker.pk)),
                    Cell(_number(right / total) if total else ""),
                    Cell(str(flags[worker.pk]), links("pipeline-workers", benchmark.name) if flags[worker.pk] else ""),
                    Cell("blocked" if worker.blocked else "", csv="yes" if worker.blocked else "no"),
                ]
            )
        return rows

    def csv(self, context: Context) -> CsvPlan:
        benchmark = context.benchmark

        def read() -> tuple[dict[int, int], dict[int, tuple[int, int, int]], dict[int, int]]:
            labels = dict(WorkerTally.objects.filter(benchmark=benchmark).values_list("worker_id", "labels"))
            work = {
                worker_id: (n, right or 0, total or 0)
                for worker_id, n, right, total in Assignment.objects.filter(hit__batch__benchmark=benchmark)
                .order_by()
                .values_list("worker_id")
                .annotate(n=Count("pk"), right=Sum("controls_correct"), total=Sum("controls_total"))
                .values_list("worker_id", "n", "right", "total")
            }
            open_flags = WorkerFlag.objects.filter(benchmark=benchmark, cleared_at__isnull=True)
            return labels, work, dict(_grouped(open_flags, "worker_id"))

        counts = _read_once(read)

        def rows(batch: list[tuple[Any, ...]]) -> list[list[Any]]:
            labels, work, flags = counts()
            out = []
            for pk, external_id, kind, blocked in batch:
                assignments, right, total = work.get(pk, (0, 0, 0))
                out.append(
                    [
                        pk,
                        external_id,
                        kind,
                        labels.get(pk, 0),
                        assignments,
                        _number(right / total) if total else "",
                        flags.get(pk, 0),
                        "yes" if blocked else "no",
                    ]
                )
            return out

        return CsvPlan(["pk", "external_id", "kind", "blocked"], rows, (1, 2))


TABLES: dict[str, Table] = {
    table.name: table for table in (ItemsTable(), CandidatesTable(), LabelsTable(), HitsTable(), WorkersTable())
}
