"""Storing a stream of target records in chunks, with the de-duplication rules of docs/design.md §2.

Each chunk costs a handful of queries: look up what exists (contexts by digest, targets by their
unique key, candidates by normalised text, labels by candidate, origin and position), insert what
is new (``bulk_create`` for contexts and targets; COPY on PostgreSQL for the many candidates and
labels), ``bulk_update`` candidates whose sources grew, and record every row the chunk names as
the import's. Memory holds one chunk of records plus one small entry per context, target and
candidate seen, so a file of any length streams through. The caller holds the transaction and the
benchmark's row lock.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence, Set
from dataclasses import dataclass

from django.db import connection, models
from django.utils import timezone

from annotation.importers.records import CandidateRecord, LabelRecord, TargetRecord, Where
from annotation.importers.report import ImportReport, LabelOverlap
from annotation.models import (
    Benchmark,
    Candidate,
    Context,
    Import,
    Label,
    LabelValue,
    Target,
    normalize_text,
    text_digest,
)
from annotation.tallies import tallies_imported, tallies_imported_new
from crowdlex.bulk import column_name, csv_field
from crowdlex.dialect import dialect

CHUNK_TARGETS = 500
CHUNK_CANDIDATES = 5000
BULK_BATCH_SIZE = 2000

TargetKey = tuple[int, int, str, str]
CandidateKey = tuple[int, str]


class BenchmarkWriter:
    def __init__(
        self,
        *,
        benchmark: Benchmark,
        import_record: Import,
        report: ImportReport,
        on_flush: Callable[[int], None] | None = None,
    ) -> None:
        self.benchmark = benchmark
        self.import_record = import_record
        self.origin = import_record.origin
        self.report = report
        self.on_flush = on_flush
        self.records_written = 0
        self._pending: list[TargetRecord] = []
        self._pending_candidates = 0
        # Each (context, spelling of its text) counts once per import: created, skipped or merged.
        self._seen_context_spellings: set[tuple[int, str | None]] = set()
        self._seen_targets: set[int] = set()
        # Candidate id -> next label position for this import's origin. A candidate that appears
        # twice in a file (merged) continues its positions, so re-importing finds the same keys.
        self._label_cursor: dict[int, int] = {}
        # Rows created by this import. Nothing else can refer to them, so the lookups below skip
        # them: inside the import's transaction the planner has no statistics for the rows it
        # just wrote and would scan them all, once per chunk.
        self._chunk_contexts: set[int] = set()
        self._chunk_targets: set[int] = set()
        self._created_candidates: set[int] = set()
        self._chunk_candidates: set[int] = set()
        # Other origin -> candidates that this import labels and that origin labelled before.
        self._overlaps: dict[str, set[int]] = {}
        # Candidates the file names again (merged on every import of it, not only the first): what
        # a re-import of the same file reports as merged (service.py, the unchanged file).
        self.candidate_repeats = 0

    def add(self, record: TargetRecord) -> None:
        self._pending.append(record)
        self._pending_candidates += len(record.candidates)
        if len(self._pending) >= CHUNK_TARGETS or self._pending_candidates >= CHUNK_CANDIDATES:
            self.flush()

    def add_all(self, records: Iterable[TargetRecord]) -> None:
        for record in records:
            self.add(record)
        self.flush()
        self.report.label_overlaps = sorted(
            (LabelOverlap(origin=origin, candidates=len(ids)) for origin, ids in self._overlaps.items()),
            key=lambda overlap: (-overlap.candidates, overlap.origin),
        )

    def flush(self) -> None:
        if not self._pending:
            return
        records, self._pending, self._pending_candidates = self._pending, [], 0
        context_ids = self._store_contexts(records)
        target_ids = self._store_targets(records, context_ids)
        occurrences, candidate_ids = self._store_candidates(records, target_ids)
        self._store_labels(occurrences, candidate_ids)
        self._record_rows(context_ids, target_ids, [candidate_ids[key] for key, _ in occurrences])
        self.records_written += len(records)
        if self.on_flush is not None:
            self.on_flush(self.records_written)

    # Contexts ---------------------------------------------------------------------------------

    def _store_contexts(self, records: list[TargetRecord]) -> list[int]:
        """Context id per record; a record may move its target onto an existing context's text."""
        counts = self.report.contexts
        digests = [text_digest(record.context_text) for record in records]
        stored: dict[str, tuple[int, str]] = {
            digest: (pk, text)
            for pk, digest, text in Context.objects.filter(
                benchmark=self.benchmark, digest__in=set(digests)
            ).values_list("id", "digest", "text")
        }
        new: dict[str, Context] = {}
        for record, digest in zip(records, digests, strict=True):
            if digest not in stored and digest not in new:
                new[digest] = Context(
                    benchmark=self.benchmark,
                    text=record.context_text,
                    digest=digest,
                    external_id=record.context_external_id,
                    extra=record.context_extra,
                )
        Context.objects.bulk_create(new.values(), batch_size=BULK_BATCH_SIZE)
        counts.created += len(new)
        self._chunk_contexts = set()
        for digest, context in new.items():
            stored[digest] = (context.pk, context.text)
            self._seen_context_spellings.add((context.pk, None))
            self._chunk_contexts.add(context.pk)

        ids = []
        for record, digest in zip(records, digests, strict=True):
            pk, text = stored[digest]
            same = record.context_text == text
            spelling = (pk, None if same else hashlib.sha1(record.context_text.encode("utf-8")).hexdigest())
            if spelling not in self._seen_context_spellings:
                self._seen_context_spellings.add(spelling)
                if same:
                    counts.skipped += 1
                else:
                    counts.merged += 1
            if not same and record.word is not None:
                _move_target(record, text)
            ids.append(pk)
        return ids

    # Targets ----------------------------------------------------------------------------------

    def _store_targets(self, records: list[TargetRecord], context_ids: list[int]) -> list[int | None]:
        counts = self.report.targets
        lookup = set(context_ids) - self._chunk_contexts
        stored: dict[TargetKey, int] = {
            (context_id, offset, word, pos): pk
            for pk, context_id, offset, word, pos in (
                Target.objects.filter(context_id__in=lookup).values_list("id", "context_id", "offset", "word", "pos")
                if lookup
                else []
            )
        }
        keys: list[TargetKey | None] = []
        new: dict[TargetKey, Target] = {}
        for record, context_id in zip(records, context_ids, strict=True):
            if record.word is None:
                keys.append(None)
                continue
            key: TargetKey = (context_id, record.offset, record.word, record.pos)
            keys.append(key)
            if key not in stored and key not in new:
                new[key] = Target(
                    context_id=context_id,
                    benchmark=self.benchmark,
                    word=record.word,
                    offset=record.offset,
                    pos=record.pos,
                    lemma=record.lemma,
                    cefr=record.cefr,
                    external_id=record.external_id,
                    extra=record.extra,
                )
        Target.objects.bulk_create(new.values(), batch_size=BULK_BATCH_SIZE)
        counts.created += len(new)
        created_now: set[int] = set()
        for key, target in new.items():
            stored[key] = target.pk
            created_now.add(target.pk)
        self._chunk_targets = created_now

        ids: list[int | None] = []
        for maybe_key in keys:
            if maybe_key is None:
                ids.append(None)
                continue
            pk = stored[maybe_key]
            if pk in self._seen_targets:
                # The file names this target again: its candidates merge into the first.
                counts.merged += 1
            else:
                self._seen_targets.add(pk)
                if pk not in created_now:
                    counts.skipped += 1
            ids.append(pk)
        return ids

    # Candidates -------------------------------------------------------------------------------

    def _store_candidates(
        self, records: list[TargetRecord], target_ids: list[int | None]
    ) -> tuple[list[tuple[CandidateKey, CandidateRecord]], dict[CandidateKey, int]]:
        counts = self.report.candidates
        lookup = {pk for pk in target_ids if pk is not None} - self._chunk_targets
        stored: dict[CandidateKey, tuple[int, list[str]]] = {
            (target_id, normalized): (pk, sources)
            for pk, target_id, normalized, sources in (
                Candidate.objects.filter(target_id__in=lookup).values_list("id", "target_id", "normalized", "sources")
                if lookup
                else []
            )
        }
        new: dict[CandidateKey, NewCandidate] = {}
        grown: dict[int, list[str]] = {}
        occurrences: list[tuple[CandidateKey, CandidateRecord]] = []
        occurred, add_candidate = occurrences.append, self.report.add_candidate
        for record, target_id in zip(records, target_ids, strict=True):
            if target_id is None:
                continue
            for candidate in record.candidates:
                key = (target_id, candidate.normalized)
                occurred((key, candidate))
                if not stored and key not in new:
                    # The usual case, a candidate new to the benchmark and to the file.
                    new[key] = NewCandidate(target_id, candidate, candidate.sources)
                    add_candidate(target_word=record.word or "", candidate=candidate)
                elif key in stored:
                    pk, sources = stored[key]
                    union = _union(sources, candidate.sources)
                    first_time = pk not in self._label_cursor
                    self._label_cursor.setdefault(pk, 0)
                    if union != sources:
                        stored[key] = (pk, union)
                        grown[pk] = union
                    if first_time and union == sources:
                        counts.skipped += 1
                    else:
                        counts.merged += 1
                        self.candidate_repeats += not first_time
                elif key in new:
                    new[key].sources = _union(new[key].sources, candidate.sources)
                    counts.merged += 1
                    self.candidate_repeats += 1
                else:
                    new[key] = NewCandidate(target_id=target_id, record=candidate, sources=candidate.sources)
                    self.report.add_candidate(target_word=record.word or "", candidate=candidate)
        insert_candidates(list(new.values()), benchmark_id=self.benchmark.pk)
        counts.created += len(new)
        for key, created in new.items():
            stored[key] = (created.pk, created.sources)
        self._chunk_candidates = {created.pk for created in new.values()}
        self._label_cursor.update(dict.fromkeys(self._chunk_candidates, 0))
        self._created_candidates |= self._chunk_candidates
        if grown:
            changed = [Candidate(pk=pk, sources=sources) for pk, sources in grown.items()]
            Candidate.objects.bulk_update(changed, ["sources"], batch_size=BULK_BATCH_SIZE)
            self.report.updated += len(changed)
        return occurrences, {key: pk for key, (pk, _) in stored.items()}

    # Labels -----------------------------------------------------------------------------------

    def _store_labels(
        self, occurrences: list[tuple[CandidateKey, CandidateRecord]], candidate_ids: dict[CandidateKey, int]
    ) -> None:
        counts = self.report.labels
        # Labels of candidates created by this import are all this import's, known to the cursor.
        lookup = {candidate_ids[key] for key, candidate in occurrences if candidate.labels} - self._created_candidates
        stored: dict[tuple[int, int], str] = {
            (candidate_id, position): value
            for candidate_id, position, value in (
                Label.objects.filter(candidate_id__in=lookup, origin=self.origin, assignment__isnull=True).values_list(
                    "candidate_id", "position", "value"
                )
                if lookup
                else []
            )
        }
        step2_labels = int(self.benchmark.scheme_settings.get("step2_labels", IMPORTED_STEP2_LABELS))
        new: list[LabelRow] = []
        # Labels of candidates this import created, as COPY's CSV lines on PostgreSQL (LabelLines).
        lines = LabelLines(self.origin, step2_labels, self.benchmark.pk) if bulk_copy() else None
        relabelled: set[int] = set()
        own: set[int] = set()
        origin, created = self.origin, self._created_candidates
        # Candidates created in this chunk hold only the labels written here: their tallies are
        # counted as the labels are written (annotation.tallies, tallies_imported_new).
        chunk, tallied = self._chunk_candidates, LabelTallies(step2_labels)
        for key, candidate in occurrences:
            if not candidate.labels:
                continue
            pk = candidate_ids[key]
            start = self._label_cursor.get(pk, 0)
            if start == 0 and pk in created:
                # A candidate this import created has no labels yet: each of its labels is new.
                if pk in chunk:
                    tallied.add(pk, candidate.labels)
                else:
                    own.add(pk)
                if lines is not None:
                    lines.add(pk, candidate.labels)
                else:
                    new.extend(
                        (
                            pk,
                            label.value,
                            label.step or (2 if position < step2_labels else 3),
                            origin,
                            position,
                            label.raw_value,
                        )
                        for position, label in enumerate(candidate.labels)
                    )
                self._label_cursor[pk] = len(candidate.labels)
                continue
            for index, label in enumerate(candidate.labels):
                position = start + index
                previous = stored.get((pk, position))
                if previous is None:
                    # SWORDS collected its first labels in the reduce step, the rest in scoring.
                    step = label.step or (2 if position < step2_labels else 3)
                    new.append((pk, label.value, step, self.origin, position, label.raw_value))
                    if pk in chunk:
                        tallied.add_one(pk, label.value, step)
                    else:
                        (own if pk in created else relabelled).add(pk)
                elif previous == label.value:
                    counts.skipped += 1
                else:
                    raise candidate.where.error(
                        f"label {position + 1} of candidate {candidate.text!r} was imported before from "
                        f"{self.origin!r} as {previous!r}; this file says {label.raw_value!r}",
                        "labels",
                    )
            self._label_cursor[pk] = start + len(candidate.labels)
        insert_labels(new, benchmark_id=self.benchmark.pk)
        counts.created += len(new)
        if lines is not None:
            lines.copy()
            counts.created += lines.count
        tallies_imported_new(tallied.counts)
        tallies_imported(own=own, others=relabelled)
        self._find_overlaps(relabelled)

    def _find_overlaps(self, relabelled: set[int]) -> None:
        """Note the candidates that get new labels here and hold labels imported under another
        origin: the same labels counted twice, unless the caller declares a new label set."""
        if not relabelled:
            return
        others = (
            Label.objects.filter(candidate_id__in=relabelled, assignment__isnull=True)
            .exclude(origin=self.origin)
            .values_list("candidate_id", "origin")
            .distinct()
        )
        for candidate_id, origin in others:
            self._overlaps.setdefault(origin, set()).add(candidate_id)

    # Rows of the import ---------------------------------------------------------------------------

    def _record_rows(self, context_ids: list[int], target_ids: list[int | None], candidate_ids: list[int]) -> None:
        """Record the chunk's rows as the import's, so that removing it knows what it brought."""
        import_id = self.import_record.pk
        insert_import_rows(
            Import.contexts.through, "context", import_id, set(context_ids), created=self._chunk_contexts
        )
        insert_import_rows(
            Import.targets.through,
            "target",
            import_id,
            {pk for pk in target_ids if pk is not None},
            created=self._chunk_targets,
        )
        insert_import_rows(
            Import.candidates.through, "candidate", import_id, set(candidate_ids), created=self._chunk_candidates
        )


# SWORDS collected a candidate's first three labels in step 2 (reduce) and the rest in step 3; an
# import follows the benchmark's own split when its scheme settings set one. The same default as
# schemes.swords.settings.SwordsSettings (a test keeps them equal; this app sits below schemes).
IMPORTED_STEP2_LABELS = 3


def bulk_copy() -> bool:
    """Whether the many rows of an import go in with COPY (``crowdlex.dialect``)."""
    return dialect().bulk_copy


# candidate id, value, step, origin, position, raw value
LabelRow = tuple[int, str, int, str, int, str]
_LABEL_COLUMNS = ("candidate", "value", "step", "origin", "position", "raw_value", "created_at", "benchmark")


def insert_labels(rows: list[LabelRow], *, benchmark_id: int) -> None:
    """Insert imported labels: COPY on PostgreSQL, one prepared INSERT run for all rows elsewhere.

    Labels are the bulk of an import (122k of the SWORDS dev set's 146k rows) and nothing needs
    their ids back, so they skip the model instances ``bulk_create`` would build for each row.
    """
    if not rows:
        return
    now = timezone.now()
    if bulk_copy():
        stamp = now.isoformat()
        dialect().copy_rows(
            Label,
            _LABEL_COLUMNS,
            ((*row, stamp, benchmark_id) for row in rows),
            not_null=("value", "origin", "raw_value"),
        )
        return
    columns = ", ".join(column_name(Label, name) for name in _LABEL_COLUMNS)
    table = connection.ops.quote_name(Label._meta.db_table)
    created_at = connection.ops.adapt_datetimefield_value(now)
    placeholders = ", ".join(["%s"] * len(_LABEL_COLUMNS))
    with connection.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {table} ({columns}) VALUES ({placeholders})",
            [(*row, created_at, benchmark_id) for row in rows],
        )


class LabelLines:
    """The labels of new candidates written straight as COPY's CSV lines (PostgreSQL).

    A SWORDS test split has a quarter of a million labels of a handful of kinds: the part of each
    line after the candidate's id depends only on the label's value, spelling and step, and on its
    position, so it is spelled once per kind, not a tuple and a ``csv.writer`` row per label (which
    took more of the importer's CPU than COPY took of PostgreSQL's, docs/benchmarks.md). A list of
    labels that candidates share (a SWORDS file has a few hundred distinct ones, each read once)
    is spelled once too: a candidate's lines are then its id joined with them, one string."""

    def __init__(self, origin: str, step2_labels: int, benchmark_id: int) -> None:
        self.origin = csv_field(origin)
        self.step2_labels = step2_labels
        # Every line ends with when it was written and its benchmark: the same for the whole import.
        self.end = f"{timezone.now().isoformat()},{benchmark_id}\n"
        self.lines: list[str] = []
        self.count = 0
        self._middle: dict[tuple[str, int], str] = {}
        self._tail: dict[str, str] = {}
        # id of a list of labels -> (the list, kept so that its id is not reused; its lines after
        # the candidate's id). Kept for one chunk, so bounded by the chunk's candidates.
        self._spelled: dict[int, tuple[Sequence[LabelRecord], list[str]]] = {}

    def add(self, pk: int, labels: Sequence[LabelRecord]) -> None:
        known = self._spelled.get(id(labels))
        if known is None:
            known = self._spelled[id(labels)] = (labels, self._rests(labels))
        rests = known[1]
        prefix = str(pk)
        self.lines.append(prefix + prefix.join(rests))
        self.count += len(rests)

    def _rests(self, labels: Sequence[LabelRecord]) -> list[str]:
        """Each label's line after the candidate's id."""
        middle, tail, rests = self._middle, self._tail, []
        for position, label in enumerate(labels):
            # SWORDS collected its first labels in the reduce step, the rest in scoring.
            step = label.step or (2 if position < self.step2_labels else 3)
            before = middle.get((label.value, step))
            if before is None:
                before = middle[label.value, step] = f",{csv_field(label.value)},{step},{self.origin},"
            after = tail.get(label.raw_value)
            if after is None:
                after = tail[label.raw_value] = f",{csv_field(label.raw_value)},{self.end}"
            rests.append(f"{before}{position}{after}")
        return rests

    def copy(self) -> None:
        dialect().copy_lines(Label, _LABEL_COLUMNS, self.lines, not_null=("value", "origin", "raw_value"))


_TALLIED: dict[str, int] = {LabelValue.ACCEPT: 0, LabelValue.REJECT: 1, LabelValue.ABSTAIN: 2}


class LabelTallies:
    """Counts of the labels written for candidates created in one chunk: candidate id ->
    ``[accepts, rejects, abstains, labels, step2_labels, step2_accepts]`` (``annotation.tallies``).
    A list of labels that candidates share is counted once."""

    def __init__(self, step2_labels: int) -> None:
        self.step2_labels = step2_labels
        self.counts: dict[int, list[int]] = {}
        # id of a list of labels -> (the list, kept so that its id is not reused; its counts).
        self._counted: dict[int, tuple[Sequence[LabelRecord], tuple[int, ...]]] = {}

    def add(self, pk: int, labels: Sequence[LabelRecord]) -> None:
        known = self._counted.get(id(labels))
        if known is None:
            counts = [0] * 6
            for position, label in enumerate(labels):
                # SWORDS collected its first labels in the reduce step, the rest in scoring.
                _count(counts, label.value, label.step or (2 if position < self.step2_labels else 3))
            known = self._counted[id(labels)] = (labels, tuple(counts))
        previous = self.counts.get(pk)
        if previous is None:
            self.counts[pk] = list(known[1])
        else:
            self.counts[pk] = [before + more for before, more in zip(previous, known[1], strict=True)]

    def add_one(self, pk: int, value: str, step: int) -> None:
        _count(self.counts.setdefault(pk, [0] * 6), value, step)


def _count(counts: list[int], value: str, step: int) -> None:
    """One label of ``value`` collected in ``step`` added to a tally's counts."""
    index = _TALLIED.get(value)
    if index is not None:
        counts[index] += 1
    counts[3] += 1
    if step == 2:
        counts[4] += 1
        counts[5] += value == LabelValue.ACCEPT


def insert_import_rows(
    through: type[models.Model], name: str, import_id: int, ids: set[int], *, created: Set[int] = frozenset()
) -> None:
    """Record rows as an import's; rows it recorded before (the same origin again) stay as they are.

    ``created`` are ids among ``ids`` of rows this chunk created: no import can hold them yet, so on
    PostgreSQL they go in with COPY, without the conflict check that the others need (an
    insertion that may conflict costs PostgreSQL an index probe and a speculative insertion per
    row: a fifth of its time on the SWORDS test split went to recording 45,705 candidates). On
    PostgreSQL at most two statements per chunk: building a model instance per row doubled the
    cost of recording the SWORDS dev set's 23k candidates."""
    if not ids:
        return
    if not bulk_copy():
        rows = [through(import_id=import_id, **{f"{name}_id": pk}) for pk in ids]
        through._default_manager.bulk_create(rows, batch_size=BULK_BATCH_SIZE, ignore_conflicts=True)
        return
    fresh = ids & created
    if fresh:
        dialect().copy_lines(through, ("import", name), [f"{import_id},{pk}\n" for pk in sorted(fresh)])
    others = ids - fresh
    if not others:
        return
    table = connection.ops.quote_name(through._meta.db_table)
    columns = ", ".join(column_name(through, field) for field in ("import", name))
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} ({columns}) SELECT %s, unnest(%s::bigint[]) ON CONFLICT DO NOTHING",
            [import_id, sorted(others)],
        )


_CANDIDATE_COLUMNS = ("target", "text", "normalized", "sources", "stage", "external_id", "cefr", "extra", "benchmark")


@dataclass(slots=True)
class NewCandidate:
    target_id: int
    record: CandidateRecord
    sources: list[str]
    pk: int = 0


def insert_candidates(candidates: list[NewCandidate], *, benchmark_id: int) -> None:
    """Insert new candidates of targets of benchmark ``benchmark_id`` and set their ids; on PostgreSQL
    with COPY. At SWORDS sizes, building a model instance per row was most of the time ``bulk_create``
    took."""
    if not candidates:
        return
    if not bulk_copy():
        objects = [
            Candidate(
                target_id=c.target_id,
                text=c.record.text,
                normalized=c.record.normalized,
                sources=c.sources,
                external_id=c.record.external_id,
                cefr=c.record.cefr,
                extra=c.record.extra,
                benchmark_id=benchmark_id,
            )
            for c in candidates
        ]
        Candidate.objects.bulk_create(objects, batch_size=BULK_BATCH_SIZE)
        for candidate, created in zip(candidates, objects, strict=True):
            candidate.pk = created.pk
        return
    stage = csv_field(str(Candidate._meta.get_field("stage").get_default()))
    # Every line ends with the benchmark: the same for the whole import.
    end = f",{benchmark_id}\n"
    # Ids come from the table's own sequence, so the rows can go in with COPY like the labels;
    # increasing, so that ids follow file order (exports order rows by id).
    for candidate, pk in zip(candidates, dialect().reserve_ids(Candidate, len(candidates)), strict=True):
        candidate.pk = pk
    # Written straight as COPY's CSV lines, like the labels (LabelLines). A file has a handful of
    # distinct source lists: each is spelled as JSON once; so is an extra that candidates share
    # (a SWORDS file's, by the sources of its substitutes), known by identity while the
    # candidates hold it.
    sources_json: dict[tuple[str, ...], str] = {}
    extra_json: dict[int, str] = {}
    lines = []
    for c in candidates:
        record = c.record
        key = tuple(c.sources)
        sources = sources_json.get(key)
        if sources is None:
            sources = sources_json[key] = csv_field(json.dumps(c.sources))
        extra = extra_json.get(id(record.extra))
        if extra is None:
            extra = extra_json[id(record.extra)] = csv_field(json.dumps(record.extra))
        lines.append(
            f"{c.pk},{c.target_id},{csv_field(record.text)},{csv_field(record.normalized)},{sources},{stage},"
            f"{csv_field(record.external_id)},{csv_field(record.cefr)},{extra}{end}"
        )
    dialect().copy_lines(
        Candidate,
        ("id", *_CANDIDATE_COLUMNS),
        lines,
        not_null=("text", "normalized", "stage", "external_id", "cefr"),
    )


def _union(old: list[str], more: list[str]) -> list[str]:
    if not more or set(more) <= set(old):
        return old
    return sorted(set(old) | set(more))


def _move_target(record: TargetRecord, stored_text: str) -> None:
    """Point the record's target into the stored spelling of the same context.

    The stored and imported texts are equal up to case and whitespace, so the target starts after
    the same number of non-space characters in both.
    """
    assert record.word is not None
    where: Where = record.where
    before = sum(1 for char in record.context_text[: record.offset] if not char.isspace())
    inside = sum(1 for char in record.word if not char.isspace())
    start = _index_after_non_space(stored_text, before)
    end = _index_after_non_space(stored_text, before + inside, skip_trailing=False)
    found = stored_text[start:end] if start is not None and end is not None else ""
    if not found or normalize_text(found) != normalize_text(record.word):
        raise where.error(
            f"the context repeats a stored context up to case and spacing, but {record.word!r} "
            "cannot be found at the same place in it",
            "offset",
        )
    record.offset, record.word = start, found  # type: ignore[assignment]


def _index_after_non_space(text: str, count: int, *, skip_trailing: bool = True) -> int | None:
    """Index in text after `count` non-space characters (then past spaces, if skip_trailing)."""
    seen = 0
    index = 0
    while index < len(text) and seen < count:
        if not text[index].isspace():
            seen += 1
        index += 1
    if seen < count:
        return None
    if skip_trailing:
        while index < len(text) and text[index].isspace():
            index += 1
    return index
