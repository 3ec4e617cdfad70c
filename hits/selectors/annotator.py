"""Reads for the annotator's side: the page of one HIT, a worker's answers, live claim, history and
progress; and the structured answers that the schemes which merge several annotators' work read."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from annotation.models import Benchmark, Context, Target, Worker
from crowdlex.sql import execute, instances, kept_cursor, select_columns, typed
from crowds.interface import queue_backend_names
from hits.guards import benchmark_mitigations
from hits.models import (
    HIT,
    SUBMITTED_STATUSES,
    VALID_STATUSES,
    Answer,
    Assignment,
    AssignmentDraft,
    AssignmentStatus,
    Batch,
    BatchWorkDone,
    HITItem,
    Mitigations,
)
from hits.selectors.projects import title_of_project
from schemes import get_scheme
from schemes.base import Page, SchemeSettings
from schemes.design import EMPTY_DESIGN, TaskDesign, design_stored

# --- the annotator's side ---


@dataclass(frozen=True)
class ItemRow:
    """One row of the annotator's page. Deliberately without the item's kind: controls look
    exactly like candidates (docs/design.md §1)."""

    id: int
    number: int
    text: str
    selected: str
    missing: bool


@dataclass(frozen=True)
class HitPage:
    """What the annotator's page shows: the context split around the target, and the rows.

    The three parts of the context are plain text, escaped separately by the template, so the
    highlight never needs ``|safe``. ``context`` and ``offset`` are the stored ones, for the API.
    """

    before: str
    target: str
    after: str
    word: str
    context: str
    offset: int
    rows: list[ItemRow]
    # How the benchmark's scheme shows its HITs (schemes.base.Page), and its question around the target.
    scheme: Page
    question_before: str
    question_after: str
    # The benchmark's language (a BCP 47 tag) for the context and the rows.
    language: str

    @property
    def answered(self) -> int:
        return sum(1 for row in self.rows if row.selected)

    # The benchmark's scheme settings, for a page that shows them (how many targets to mark).
    settings: SchemeSettings
    benchmark_id: int
    # What the page does against answers from language models (none when the researcher set none).
    mitigations: Mitigations
    # The project the HIT belongs to, as the annotator's list of projects names it (docs/design.md §11).
    project: str = ""
    # The batch's task design (docs/design.md §4.1): its instructions and examples; ``scheme`` is
    # already the page with its choices' labels and keys.
    design: TaskDesign = EMPTY_DESIGN


@functools.cache
def _page_sql() -> str:
    """The page's statement, in SQL: it runs on every claim and every page, and the ORM took about
    a millisecond of CPU to build it each time. A benchmark without mitigations gives NULLs (all
    off) from the left join, not another statement."""
    item, hit, target, context, batch, benchmark, mitigations = (
        model._meta.db_table for model in (HITItem, HIT, Target, Context, Batch, Benchmark, Mitigations)
    )
    return f"""
        SELECT i.id, i.text, t.word, t."offset", c.text, bm.scheme, bm.language, bm.scheme_settings,
               b.step, b.benchmark_id, b.title, bm.title, bm.name, m.pledge, m.block_copy_paste, m.notice,
               b.design
        FROM {item} i
        JOIN {hit} h ON h.id = i.hit_id
        JOIN {target} t ON t.id = h.target_id
        JOIN {context} c ON c.id = t.context_id
        JOIN {batch} b ON b.id = h.batch_id
        JOIN {benchmark} bm ON bm.id = b.benchmark_id
        LEFT JOIN {mitigations} m ON m.benchmark_id = bm.id
        WHERE i.hit_id = %s
        ORDER BY i.position
    """


def hit_page(
    *,
    hit_id: int,
    selected: Mapping[int, str] | None = None,
    missing: Iterable[int] = (),
    items: Sequence[Sequence[Any]] | None = None,
) -> HitPage:
    """The page of a HIT; ``selected`` pre-fills answers (a refused form, or a submitted HIT).

    One statement (``_page_sql``): the items in display order, each row carrying the target, its
    context, the benchmark's scheme and settings, and its mitigations. ``items``: those rows, read
    already with the assignment (``assignment_page``).
    """
    if items is None:
        with kept_cursor() as cursor:
            execute(cursor, _page_sql(), [hit_id])
            items = cursor.fetchall()
    if items:
        (
            _,
            _,
            word,
            offset,
            text,
            scheme_name,
            language,
            scheme_settings,
            step,
            benchmark_id,
            *names,
            pledge,
            copy,
            notice,
            design_data,
        ) = items[0]
        project = title_of_project(*names)
        # A JSON column comes back as text from the database driver (as the ORM reads it, then parses).
        if isinstance(scheme_settings, str):
            scheme_settings = json.loads(scheme_settings)
        mitigations = Mitigations(
            benchmark_id=benchmark_id, pledge=bool(pledge), block_copy_paste=bool(copy), notice=bool(notice)
        )
    else:
        hit = HIT.objects.select_related("target__context", "batch__benchmark").get(pk=hit_id)
        word, offset, text, step = hit.target.word, hit.target.offset, hit.target.context.text, hit.batch.step
        scheme_name, language = hit.batch.benchmark.scheme, hit.batch.benchmark.language
        scheme_settings = hit.batch.benchmark.scheme_settings
        benchmark_id = hit.batch.benchmark_id
        mitigations = benchmark_mitigations(benchmark=benchmark_id)
        project = title_of_project(hit.batch.title, hit.batch.benchmark.title, hit.batch.benchmark.name)
        design_data = hit.batch.design
    if text[offset : offset + len(word)] == word:
        before, marked, after = text[:offset], word, text[offset + len(word) :]
    else:
        # The model guarantees the offset; should an import ever break it, show the text unmarked.
        before, marked, after = text, "", ""
    selected = selected or {}
    missing_ids = set(missing)
    rows = [
        ItemRow(id=pk, number=number, text=item_text, selected=selected.get(pk, ""), missing=pk in missing_ids)
        for number, (pk, item_text, *_) in enumerate(items, start=1)
    ]
    scheme = get_scheme(scheme_name, step=step)
    design, page = designed_page(scheme.page, design_data)
    question_before, question_after = page.question_around_target()
    return HitPage(
        before=before,
        target=marked,
        after=after,
        word=word,
        context=text,
        offset=offset,
        rows=rows,
        scheme=page,
        question_before=question_before,
        question_after=question_after,
        language=language,
        settings=scheme.settings_type.from_json(scheme_settings),
        benchmark_id=benchmark_id,
        mitigations=mitigations,
        project=project,
        design=design,
    )


def hit_items(*, hit_id: int) -> tuple[str, str, int, list[tuple[int, str]]]:
    """The context of a HIT, its target's word and offset, and its items (id, text) in display order:
    what the API's claim answers of the page, from ``hit_page``'s statement alone, without building
    the page's rows, its scheme's page and settings and its design (docs/benchmarks.md, "The API's
    cycle in one process")."""
    with kept_cursor() as cursor:
        execute(cursor, _page_sql(), [hit_id])
        items = cursor.fetchall()
    if not items:
        # A HIT without items: the page reads its target another way.
        page = hit_page(hit_id=hit_id, items=items)
        return page.context, page.word, page.offset, [(row.id, row.text) for row in page.rows]
    _, _, word, offset, text, *_ = items[0]
    return text, word, offset, [(pk, item_text) for pk, item_text, *_ in items]


def designed_page(page: Page, design_data: Mapping[str, Any] | str | None) -> tuple[TaskDesign, Page]:
    """The batch's design (as stored: ``Batch.design``) and the scheme's page as it shows it; the
    page is made once per design and step (a batch's pages all share it)."""
    text = design_data if isinstance(design_data, str) else json.dumps(design_data or {}, sort_keys=True)
    # A scheme's page is one object for the life of the process, so its id names it.
    key = (id(page), text)
    found = _DESIGNED_PAGES.get(key)
    if found is None:
        if len(_DESIGNED_PAGES) >= settings.WORK_PAGE_DESIGNS_KEPT:
            _DESIGNED_PAGES.clear()
        design = design_stored(text)
        found = _DESIGNED_PAGES[key] = (design, design.apply(page))
    return found


# The designed pages made so far, by (page, design); bounded (``WORK_PAGE_DESIGNS_KEPT``), as designs
# come and go.
_DESIGNED_PAGES: dict[tuple[int, str], tuple[TaskDesign, Page]] = {}


def structured_answers(*, benchmark: Benchmark, kind_prefix: str) -> Iterator[tuple[int, int, int, dict[str, Any]]]:
    """(target id, context id, worker id, data) of the valid answers with structured data
    (``Answer.data``) to the benchmark's items of a kind starting with ``kind_prefix``, in
    submission order: what the schemes that merge several annotators' work read."""
    rows = (
        Answer.objects.filter(
            item__hit__batch__benchmark=benchmark,
            item__kind__startswith=kind_prefix,
            assignment__status__in=VALID_STATUSES,
            assignment__filtered=False,
        )
        .order_by("assignment__submitted_at", "pk")
        .values_list("item__hit__target_id", "item__hit__target__context_id", "assignment__worker_id", "data")
    )
    for target_id, context_id, worker_id, data in rows.iterator(chunk_size=2000):
        if isinstance(data, dict):
            yield target_id, context_id, worker_id, data


def assignment_answers(*, assignment: Assignment) -> dict[int, str]:
    """The worker's own stored answers as the page posted them, item id -> value (a structured
    answer, ``Answer.data``, as its JSON text)."""
    return {
        item_id: value if data is None else json.dumps(data)
        for item_id, value, data in Answer.objects.filter(assignment=assignment).values_list("item_id", "value", "data")
    }


def assignment_for_page(*, assignment_id: int, user_id: int | None) -> Assignment | None:
    """The assignment with its worker, if it belongs to the user's worker (the worker is joined in:
    the submit claims the next HIT for it)."""
    if user_id is None:
        return None
    return Assignment.objects.select_related("worker").filter(pk=assignment_id, worker__user_id=user_id).first()


def live_claim(*, worker: Worker, now: datetime | None = None) -> Assignment | None:
    """The worker's claim in progress on the local queue, if any."""
    now = now or timezone.now()
    return (
        Assignment.objects.filter(
            worker=worker,
            status=AssignmentStatus.CLAIMED,
            deadline__gt=now,
            hit__batch__backend__in=queue_backend_names(),
        )
        .order_by("claimed_at")
        .first()
    )


def work_history(*, worker: Worker) -> QuerySet[Assignment]:
    """The worker's own submitted assignments, newest first (no scores, no filtering flags)."""
    return (
        Assignment.objects.filter(worker=worker, status__in=SUBMITTED_STATUSES)
        .select_related("hit__target")
        .order_by("-submitted_at", "-id")
    )


def work_counts(*, worker: Worker, now: datetime | None = None) -> dict[str, int]:
    """How many HITs the worker has submitted, in all and in the last 24 hours."""
    now = now or timezone.now()
    done = Assignment.objects.filter(worker=worker, status__in=SUBMITTED_STATUSES)
    return {
        "done": done.count(),
        "today": done.filter(submitted_at__gte=now - timedelta(days=1)).count(),
    }


def work_assignments(*, worker: Worker) -> QuerySet[Assignment]:
    """All of the worker's own assignments, newest first, for their history in the API."""
    return Assignment.objects.filter(worker=worker).select_related("hit__target").order_by("-claimed_at", "-id")


@dataclass(frozen=True)
class WorkProgress:
    """Where the annotator stands, for the top of a HIT's page.

    ``due_at`` is the deadline the worker is told: the claim plus the batch's assignment duration,
    which on MTurk is MTurk's own deadline (its clock starts when the worker accepts, the moment the
    page first opens). ``Assignment.deadline`` may be later: on a paid crowd the platform keeps the
    slot a little longer (``crowds.services.publishing.CLAIM_GRACE``) so that a submit in MTurk's last
    seconds is still taken, and telling the worker that later time would make them miss MTurk's.
    """

    due_at: datetime
    seconds_left: int
    word: str
    part: int
    parts: int
    done_in_batch: int
    # HITs the worker submitted since signing in (None where the time of the sign-in is not known).
    done_since: int | None = None


@functools.cache
def _progress_sql(*, page: bool = False) -> str:
    """The assignment and its draft, with its HIT's part, word and assignment duration, the count of
    the target's HITs in the batch, the worker's submitted HITs in the batch (kept,
    ``BatchWorkDone``: one row by key whatever their history) and since a time (by index): one
    statement for the top of every page. In SQL, prepared on PostgreSQL (``crowdlex.sql``): the ORM
    took over a millisecond to build it.

    With ``page``, the same row also carries what ``_page_sql`` reads of the HIT's target, batch,
    benchmark and mitigations, and is followed by one row per item of the HIT in display order
    (its id and text, the rest NULL: the wide row is read once, not once per item), each row led
    by its place; so the page of a HIT reads the assignment and the page in one statement
    (``assignment_page``).
    """
    assignment, hit, target, batch, draft, done, item, context, benchmark, mitigations = (
        model._meta.db_table
        for model in (
            Assignment,
            HIT,
            Target,
            Batch,
            AssignmentDraft,
            BatchWorkDone,
            HITItem,
            Context,
            Benchmark,
            Mitigations,
        )
    )
    statuses = ", ".join(["%s"] * len(SUBMITTED_STATUSES))
    since = typed(Assignment._meta.get_field("submitted_at"))
    columns = f"""
        {select_columns((Assignment, "a"), (AssignmentDraft, "dr"))}, h.part, t.word, b.assignment_duration,
            (SELECT COUNT(*) FROM {hit} p WHERE p.batch_id = h.batch_id AND p.target_id = h.target_id),
            (SELECT d.done FROM {done} d WHERE d.worker_id = a.worker_id AND d.batch_id = h.batch_id),
            (SELECT COUNT(*) FROM {assignment} s
             WHERE s.worker_id = a.worker_id AND s.status IN ({statuses}) AND s.submitted_at >= {since})
    """
    joins = f"""
        FROM {assignment} a
        JOIN {hit} h ON h.id = a.hit_id
        JOIN {target} t ON t.id = h.target_id
        JOIN {batch} b ON b.id = h.batch_id
        LEFT JOIN {draft} dr ON dr.assignment_id = a.id
    """
    where = "WHERE a.id = %s AND (a.worker_id = %s OR %s)"
    if not page:
        return f"SELECT {columns} {joins} {where}"
    # After the progress's columns, the page's (``_page_sql``'s, but for the item's id and text and
    # the word, already there), then the item's id and text.
    return f"""
        WITH progress AS MATERIALIZED (
            SELECT {columns}, t."offset" AS page_offset, c.text AS page_context, bm.scheme AS page_scheme,
                bm.language AS page_language, bm.scheme_settings AS page_settings, b.step AS page_step,
                b.benchmark_id AS page_benchmark, b.title AS page_batch_title, bm.title AS page_benchmark_title,
                bm.name AS page_benchmark_name, m.pledge AS page_pledge, m.block_copy_paste AS page_copy,
                m.notice AS page_notice, b.design AS page_design
            {joins}
            JOIN {context} c ON c.id = t.context_id
            JOIN {benchmark} bm ON bm.id = b.benchmark_id
            LEFT JOIN {mitigations} m ON m.benchmark_id = bm.id
            {where}
        )
        SELECT 0, progress.*, NULL, NULL FROM progress
        UNION ALL
        SELECT 1 + i.position, {", ".join(["NULL"] * _progress_width(page=True))}, i.id, i.text
        FROM {item} i JOIN progress ON progress.hit_id = i.hit_id
        ORDER BY 1
    """


def _progress_width(*, page: bool) -> int:
    """How many columns ``_progress_sql`` reads before the items' (a row's own: its models', six more,
    and with ``page`` the HIT's ``_PAGE_COLUMNS``)."""
    models = len(Assignment._meta.concrete_fields) + len(AssignmentDraft._meta.concrete_fields)
    return models + 6 + (_PAGE_COLUMNS if page else 0)


# The page's columns after the progress's in ``_progress_sql(page=True)``: the HIT's, before the item's 2.
_PAGE_COLUMNS = 14


def _progress_params(*, assignment_id: int, worker_id: int | None, since: datetime | None) -> list[Any]:
    statuses = [str(status) for status in SUBMITTED_STATUSES]
    return [*statuses, since, assignment_id, worker_id or 0, worker_id is None]


def _progress_from_row(row: Sequence[Any], *, since: datetime | None, now: datetime) -> tuple[Assignment, WorkProgress]:
    *columns, part, word, duration, parts_count, done_count, done_since = row
    assignment, draft = instances(columns, (Assignment, "a"), (AssignmentDraft, "dr"))
    # The HIT page shows it (docs/design.md §4): read here, in the same statement.
    Assignment.draft.related.set_cached_value(assignment, draft)  # type: ignore[attr-defined]
    # PostgreSQL returns an interval; SQLite stores a duration as microseconds.
    if not isinstance(duration, timedelta):
        duration = timedelta(microseconds=int(duration))
    due_at = assignment.claimed_at + duration
    progress = WorkProgress(
        due_at=due_at,
        seconds_left=max(0, int((due_at - now).total_seconds())),
        word=word,
        part=part + 1,
        parts=parts_count or 0,
        done_in_batch=done_count or 0,
        done_since=done_since if since is not None else None,
    )
    return assignment, progress


def assignment_page(
    *, assignment_id: int, worker_id: int, since: datetime | None = None, now: datetime | None = None
) -> tuple[Assignment, WorkProgress, list[tuple[Any, ...]]] | None:
    """``assignment_with_progress`` and the rows ``hit_page`` reads of the assignment's HIT (its
    ``items``), in one statement: what the page of a HIT reads. None if the worker has no such
    assignment."""
    now = now or timezone.now()
    params = _progress_params(assignment_id=assignment_id, worker_id=worker_id, since=since)
    with kept_cursor() as cursor:
        execute(cursor, _progress_sql(page=True), params)
        rows = cursor.fetchall()
    if not rows:
        return None
    first = rows[0]
    progress_end = 1 + _progress_width(page=False)
    assignment, progress = _progress_from_row(first[1:progress_end], since=since, now=now)
    hit_columns = tuple(first[progress_end:-2])
    items = [(row[-2], row[-1], progress.word, *hit_columns) for row in rows[1:]]
    return assignment, progress, items


def assignment_with_progress(
    *, assignment_id: int, worker_id: int | None, since: datetime | None = None, now: datetime | None = None
) -> tuple[Assignment, WorkProgress] | None:
    """The assignment (only ``worker_id``'s, when given) and where its worker stands
    (``WorkProgress``; with ``since``, also how many HITs they submitted since then); None if
    there is no such assignment. One statement."""
    now = now or timezone.now()
    params = _progress_params(assignment_id=assignment_id, worker_id=worker_id, since=since)
    with kept_cursor() as cursor:
        execute(cursor, _progress_sql(), params)
        row = cursor.fetchone()
    if row is None:
        return None
    return _progress_from_row(row, since=since, now=now)


@dataclass(frozen=True)
class HitPart:
    """Which part of its target's HITs in the batch a HIT is (counting from 1), and the word: what the
    line after a submit names (``hits.views.annotator.saved_message``)."""

    word: str
    part: int
    parts: int


@functools.cache
def _part_sql() -> str:
    hit, target = HIT._meta.db_table, Target._meta.db_table
    return f"""
        SELECT t.word, h.part,
            (SELECT COUNT(*) FROM {hit} p WHERE p.batch_id = h.batch_id AND p.target_id = h.target_id)
        FROM {hit} h JOIN {target} t ON t.id = h.target_id
        WHERE h.id = %s
    """


def hit_part(*, hit_id: int) -> HitPart:
    """The HIT's word and part among its target's HITs in the batch: one statement by index, what
    the line after a submit needs of ``assignment_progress``."""
    with kept_cursor() as cursor:
        execute(cursor, _part_sql(), [hit_id])
        row = cursor.fetchone()
    if row is None:
        raise HIT.DoesNotExist(f"no HIT {hit_id}")
    word, part, parts = row
    return HitPart(word=word, part=part + 1, parts=parts or 0)


def assignment_progress(*, assignment: Assignment, now: datetime | None = None) -> WorkProgress:
    """The worker's deadline, the HIT's part among its target's HITs in the batch (counting from 1),
    and how many HITs of the batch the worker has submitted (``assignment_with_progress``)."""
    found = assignment_with_progress(assignment_id=assignment.pk, worker_id=None, now=now)
    if found is None:
        raise Assignment.DoesNotExist(f"no assignment {assignment.pk}")
    return found[1]
