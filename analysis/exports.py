"""Streaming exports of a benchmark: SWORDS JSON, flat CSV tables of labels and candidates, statistics.

Every format is written row by row from server-side cursors (``QuerySet.iterator``), so memory
stays bounded by a chunk of rows whatever the size of the benchmark (DESIGN §7). Sections that
need values from another table (a substitute needs its target's SWORDS id, a candidate row its
label counts) walk two streams sorted the same way side by side instead of building a lookup.

Only valid labels are exported (``annotation.selectors.valid_labels``).
"""

from __future__ import annotations

import csv
import io
import json
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

from django.contrib.postgres.aggregates import ArrayAgg
from django.db import connection
from django.db.models import Case, CharField, Count, F, OuterRef, Q, QuerySet, Subquery, TextField, Value, When
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Coalesce

from analysis import swords
from analysis.selectors import (
    CHUNK_SIZE,
    benchmark_valid_labels,
    collection_order,
    reannotation_origin,
    scans_without_jit,
    stream_rows,
)
from annotation.models import Benchmark, Candidate, Context, Label, LabelValue, Target
from schemes.swords.scores import DEFAULT_THRESHOLDS, ScoreThresholds, category_of

Progress = Callable[[int, int], None]

SWORDS = "swords"
LABELS_CSV = "labels-csv"
CANDIDATES_CSV = "candidates-csv"
STATS = "stats"

LABEL_COLUMNS: tuple[str, ...] = (
    "label_id",
    "candidate_id",
    "candidate_external_id",
    "candidate",
    "target_id",
    "target",
    "context_id",
    "worker_id",
    "worker",
    "assignment_id",
    "step",
    "value",
    "raw_value",
    "origin",
    "position",
    "time",
)
CANDIDATE_COLUMNS: tuple[str, ...] = (
    "candidate_id",
    "candidate_external_id",
    "target_id",
    "target_external_id",
    "target",
    "pos",
    "context_id",
    "text",
    "sources",
    "stage",
    "score",
    "accepts",
    "rejects",
    "abstains",
    "labels",
    "category",
)
#: Separator of the sources inside one CSV cell (source names never contain it).
SOURCE_SEPARATOR = ";"
PROGRESS_EVERY = 5000
# Rows per CSV piece: the csv module's buffer holds four bytes a character.
CSV_BATCH = 500


class RowCounter:
    """Counts written rows and reports progress every PROGRESS_EVERY rows."""

    def __init__(self, total: int, progress: Progress | None) -> None:
        self.total = max(total, 1)
        self.done = 0
        self.progress = progress

    def tick(self, rows: int = 1) -> None:
        before = self.done // PROGRESS_EVERY
        self.done += rows
        if self.progress is not None and self.done // PROGRESS_EVERY != before:
            self.progress(min(self.done, self.total), self.total)

    def finish(self) -> None:
        if self.progress is not None:
            self.progress(self.total, self.total)


def _benchmark_label_set(benchmark: Benchmark) -> QuerySet[Label]:
    """Valid labels without a re-annotation marked on the benchmark (the labels-csv keeps every label)."""
    labels = benchmark_valid_labels(benchmark=benchmark)
    origin = reannotation_origin(benchmark)
    if origin is not None:
        labels = labels.exclude(Q(origin=origin) & Q(assignment__isnull=True))
    return labels


# --- the flat tables -------------------------------------------------------------------------


def label_rows(*, benchmark: Benchmark) -> Iterator[tuple[Any, ...]]:
    """One tuple per valid label (LABEL_COLUMNS), by target, candidate and collection order."""
    rows = stream_rows(
        benchmark_valid_labels(benchmark=benchmark)
        # The database writes the timestamp (UTC, ISO 8601 with a space): far cheaper than datetimes.
        .annotate(time=Cast(Coalesce("assignment__submitted_at", "created_at"), TextField()))
        .order_by("candidate__target_id", "candidate_id", *collection_order())
        .values_list(
            "id",
            "candidate_id",
            "candidate__external_id",
            "candidate__text",
            "candidate__target_id",
            "candidate__target__word",
            "candidate__target__context_id",
            "worker_id",
            "worker__kind",
            "worker__external_id",
            "assignment_id",
            "step",
            "value",
            "raw_value",
            "origin",
            "position",
            "time",
        )
    )
    for row in rows:
        worker = f"{row[8]}:{row[9]}" if row[7] is not None else ""
        yield (*row[:8], worker, *row[10:17])


def _candidate_counts(benchmark: Benchmark) -> Iterator[tuple[int, int, int, int, int]]:
    """(target id, candidate id, accepts, rejects, abstains) of candidates with valid labels, in that order."""
    return stream_rows(
        _benchmark_label_set(benchmark)
        .order_by()
        .values("candidate__target_id", "candidate_id")
        .annotate(
            accepts=Count("id", filter=Q(value=LabelValue.ACCEPT)),
            rejects=Count("id", filter=Q(value=LabelValue.REJECT)),
            abstains=Count("id", filter=Q(value=LabelValue.ABSTAIN)),
        )
        .order_by("candidate__target_id", "candidate_id")
        .values_list("candidate__target_id", "candidate_id", "accepts", "rejects", "abstains")
    )


class _JoinedSources:
    """Sources JSON text as ``a;b``, parsed once per distinct text (a benchmark has a handful)."""

    def __init__(self) -> None:
        self.cache: dict[str, str] = {}

    def __call__(self, text: str | None) -> str:
        if not text:
            return ""
        joined = self.cache.get(text)
        if joined is None:
            joined = SOURCE_SEPARATOR.join(json.loads(text))
            if len(self.cache) < 4096:
                self.cache[text] = joined
        return joined


def candidate_rows(
    *, benchmark: Benchmark, thresholds: ScoreThresholds = DEFAULT_THRESHOLDS
) -> Iterator[tuple[Any, ...]]:
    """One tuple per candidate (CANDIDATE_COLUMNS) with its score and category, by target then id."""
    candidates = stream_rows(
        Candidate.objects.filter(target__benchmark=benchmark)
        .order_by("target_id", "id")
        .values_list(
            "id",
            "external_id",
            "target_id",
            "target__external_id",
            "target__word",
            "target__pos",
            "target__context_id",
            "text",
            Cast("sources", TextField()),
            "stage",
        )
    )
    counts = _candidate_counts(benchmark)
    joined = _JoinedSources()
    pending = next(counts, None)
    for row in candidates:
        key = (row[2], row[0])
        # Counts are sorted as candidates are; skip any of a candidate created after the first query.
        while pending is not None and (pending[0], pending[1]) < key:
            pending = next(counts, None)
        accepts = rejects = abstains = 0
        if pending is not None and (pending[0], pending[1]) == key:
            accepts, rejects, abstains = pending[2:]
            pending = next(counts, None)
        labels = accepts + rejects + abstains
        score = accepts / labels if labels else None
        yield (
            *row[:8],
            joined(row[8]),
            row[9],
            score,
            accepts,
            rejects,
            abstains,
            labels,
            category_of(score, thresholds),
        )


def csv_pieces(columns: Iterable[str], rows: Iterable[Sequence[Any]], counter: RowCounter) -> Iterator[str]:
    """A header line, then the rows a chunk at a time: the one writer of every CSV export."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    rows = iter(rows)
    while True:
        batch = list(islice(rows, CSV_BATCH))
        writer.writerows(batch)
        counter.tick(len(batch))
        yield buffer.getvalue()
        if not batch:
            return
        buffer.seek(0)
        buffer.truncate()


# --- SWORDS JSON -----------------------------------------------------------------------------


def _swords_facts(row_extra: Any) -> dict[str, Any] | None:
    """What the importer kept of a SWORDS object (None for rows created here)."""
    if isinstance(row_extra, dict) and isinstance(row_extra.get("swords"), dict):
        return row_extra["swords"]
    return None


def _contexts(benchmark: Benchmark) -> Iterator[tuple[str, dict[str, Any]]]:
    rows = Context.objects.filter(benchmark=benchmark).order_by("id").values_list("text", "extra")
    for text, extra in rows.iterator(chunk_size=CHUNK_SIZE):
        item: dict[str, Any] = {"context": text}
        facts = _swords_facts(extra)
        if facts is not None and "extra" in facts:
            item["extra"] = facts["extra"]
        yield swords.context_id(text), item


def _pos_tag(pos: str) -> str:
    return swords.POS_TAGS.get(pos, pos.upper())


def _targets(benchmark: Benchmark) -> Iterator[tuple[str, dict[str, Any]]]:
    """(SWORDS id, SWORDS object) of each target, by pk."""
    rows = (
        Target.objects.filter(benchmark=benchmark)
        .order_by("id")
        .values_list("word", "offset", "pos", "lemma", "extra", "context__text")
    )
    for word, offset, pos, lemma, extra, context_text in rows.iterator(chunk_size=CHUNK_SIZE):
        facts = _swords_facts(extra)
        cid = swords.context_id(context_text)
        item: dict[str, Any] = {
            "context_id": cid,
            # The file may spell the target differently from the text (the library compares case-insensitively).
            "target": facts.get("target", word) if facts is not None else word,
            "offset": offset,
            "pos": facts.get("pos", _pos_tag(pos)) if facts is not None else _pos_tag(pos),
        }
        if facts is not None:
            if "extra" in facts:
                item["extra"] = facts["extra"]
        elif lemma:
            item["extra"] = {"lemma": lemma}
        yield swords.target_id(context_id=cid, word=item["target"], offset=offset, pos=item["pos"]), item


def _target_ids(benchmark: Benchmark) -> Iterator[tuple[int, str]]:
    """(pk, SWORDS id) of each target, by pk, reading only what the id needs."""
    rows = (
        Target.objects.filter(benchmark=benchmark)
        .order_by("id")
        .values_list(
            "id", "word", "offset", "pos", KT("extra__swords__target"), KT("extra__swords__pos"), "context__text"
        )
    )
    for pk, word, offset, pos, file_word, file_pos, context_text in rows.iterator(chunk_size=CHUNK_SIZE):
        yield (
            pk,
            swords.target_id(
                context_id=swords.context_id(context_text),
                word=file_word if file_word is not None else word,
                offset=offset,
                pos=file_pos if file_pos is not None else _pos_tag(pos),
            ),
        )


def _label_name() -> Case:
    """The SWORDS name of a label, computed in the database: an imported spelling wins."""
    return Case(
        When(raw_value__in=sorted(swords.SWORDS_LABELS), then=F("raw_value")),
        *(When(value=value, then=Value(name)) for value, name in swords.LABEL_NAMES.items()),
        output_field=CharField(),
    )


class _RenderedExtra:
    """A candidate's SWORDS ``extra`` rendered three levels deep, cached by the stored JSON text.

    Imported candidates keep the file's ``extra`` (SWORDS has only a handful of distinct ones);
    candidates created here get ``{"sources": [...]}``. The cache is bounded, so is memory.
    """

    def __init__(self, limit: int = 4096) -> None:
        self.limit = limit
        self.cache: dict[tuple[str, str], str | None] = {}

    def __call__(self, extra_text: str, sources_text: str) -> str | None:
        key = (extra_text, sources_text)
        if key in self.cache:
            return self.cache[key]
        facts = _swords_facts(json.loads(extra_text) if extra_text else None)
        if facts is None:
            rendered: str | None = swords.render({"sources": list(json.loads(sources_text or "[]"))}, 3)
        else:
            rendered = swords.render(facts["extra"], 3) if "extra" in facts else None
        if len(self.cache) >= self.limit:
            self.cache.clear()
        self.cache[key] = rendered
        return rendered


def _valid_labels_of_candidate(benchmark: Benchmark) -> QuerySet[Label]:
    """``_benchmark_label_set`` without the benchmark filter, for a subquery keyed by candidate.

    Valid as ``valid_labels()`` is, but tested against the ids of filtered assignments, which
    PostgreSQL hashes once for the whole export, rather than joined to the assignment table
    once per candidate.
    """
    from hits.models import Assignment

    filtered = Assignment.objects.filter(filtered=True).values("id")
    labels = Label.objects.filter(Q(assignment__isnull=True) | ~Q(assignment_id__in=filtered))
    origin = reannotation_origin(benchmark)
    if origin is not None:
        labels = labels.exclude(Q(origin=origin) & Q(assignment__isnull=True))
    return labels


def _labeled_candidates(benchmark: Benchmark) -> Iterator[tuple[int, int, str, str, str, list[str]]]:
    """(pk, target pk, text, sources JSON, extra JSON, label names) of candidates with a valid label,
    by target then pk, the names in collection order.

    On PostgreSQL each candidate's names are gathered by a subquery over the label index on
    (candidate, id), so the labels arrive already grouped and ordered: no sort of all the labels,
    and one row per candidate rather than one per label. Elsewhere the labels are a second stream
    in the same order, walked beside the candidates.
    """
    candidates = Candidate.objects.filter(target__benchmark=benchmark).order_by("target_id", "id")
    columns = ("id", "target_id", "text", Cast("sources", TextField()), Cast("extra", TextField()))
    if connection.vendor == "postgresql":
        names = (
            _valid_labels_of_candidate(benchmark)
            .filter(candidate_id=OuterRef("pk"))
            .order_by()
            .values("candidate_id")
            .annotate(names=ArrayAgg(_label_name(), order_by=collection_order()))
            .values("names")
        )
        for *row, label_names in stream_rows(candidates.values_list(*columns, Subquery(names))):
            if label_names:
                yield (*row, label_names)  # type: ignore[misc]
        return
    labels = stream_rows(
        _benchmark_label_set(benchmark)
        .order_by("candidate__target_id", "candidate_id", *collection_order())
        .values_list("candidate__target_id", "candidate_id", _label_name())
    )
    end = (None, None, "")
    label_target, label_candidate, label = next(labels, end)
    for pk, candidate_target, text, sources_text, extra_text in stream_rows(candidates.values_list(*columns)):
        if label_candidate != pk:
            # Labels are sorted as candidates are; skip any of a candidate created after the first query.
            while label_target is not None and (label_target, label_candidate) < (candidate_target, pk):
                label_target, label_candidate, label = next(labels, end)
            if label_candidate != pk:
                continue
        gathered: list[str] = []
        while label_candidate == pk:
            gathered.append(label)
            label_target, label_candidate, label = next(labels, end)
        yield pk, candidate_target, text, sources_text, extra_text, gathered


def _substitutes(benchmark: Benchmark) -> Iterator[tuple[str, str, list[str]]]:
    """(SWORDS id, rendered SWORDS object, label names) of candidates with a valid label, by target then pk.

    Labeled candidates and targets are two streams in the same order, walked side by side. A
    substitute without labels is left out: the swords library refuses one.
    """
    targets = _target_ids(benchmark)
    rendered_extra = _RenderedExtra()
    target_pk, tid = -1, ""
    for _pk, candidate_target, text, sources_text, extra_text, names in _labeled_candidates(benchmark):
        while target_pk != candidate_target:
            target_pk, tid = next(targets)
        yield (
            swords.substitute_id(target_id=tid, text=text),
            swords.substitute_object(target_id=tid, text=text, extra=rendered_extra(extra_text, sources_text)),
            names,
        )


def _file_facts(benchmark: Benchmark) -> dict[str, Any]:
    facts = _swords_facts(benchmark.extra)
    return facts if facts is not None else {}


def _counted(items: Iterator[Any], counter: RowCounter) -> Iterator[Any]:
    for item in items:
        counter.tick()
        yield item


def swords_pieces(*, benchmark: Benchmark, counter: RowCounter) -> Iterator[str]:
    """The benchmark as a SWORDS dataset, piece by piece.

    Substitutes and their labels come from one walk over the candidates; the labels section,
    which the format puts after all substitutes, waits in a temporary file meanwhile.
    """
    facts = _file_facts(benchmark)
    encoder = swords.SwordsEncoder()
    yield from encoder.mapping("contexts", _counted(_contexts(benchmark), counter))
    yield from encoder.mapping("targets", _counted(_targets(benchmark), counter))
    if "extra" in facts:
        yield encoder.value("extra", facts["extra"])
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as labels_section:
        entries = [encoder.member("substitutes")]
        label_entries: list[str] = []
        count = 0
        for sid, item, names in _substitutes(benchmark):
            first = count == 0
            entries.append(swords.raw_mapping_entry(sid, item, first=first))
            label_entries.append(swords.raw_mapping_entry(sid, swords.label_list(names), first=first))
            count += 1
            counter.tick(1 + len(names))
            if len(entries) >= 500:
                yield "".join(entries)
                labels_section.write("".join(label_entries))
                entries, label_entries = [], []
        labels_section.write("".join(label_entries))
        yield "".join(entries) + swords.mapping_end(count)
        # Our candidates are lemmas (DESIGN §2); an imported file says for itself.
        yield encoder.value("substitutes_lemmatized", bool(facts.get("substitutes_lemmatized", True)))
        yield encoder.member("substitute_labels")
        labels_section.seek(0)
        while chunk := labels_section.read(64 * 1024):
            yield chunk
        yield swords.mapping_end(count)
    yield encoder.close()


# --- the registry of export formats ------------------------------------------------------------


@dataclass(frozen=True)
class ExportRequest:
    """What a format's writer gets: the benchmark, the row counter (progress), and the builder of
    the statistics document (the ``stats`` format; ``analysis.services`` passes it in)."""

    benchmark: Benchmark
    counter: RowCounter
    statistics: Callable[[], dict[str, Any]]


@dataclass(frozen=True)
class ExportFormat:
    """A named export format: its file suffix, a title for the pages, the writer of its text in
    pieces, and the rows it writes (a cheap count, for progress). ``schemes`` names the schemes
    whose benchmarks it fits (None: every scheme), e.g. a scheme's released format."""

    name: str
    suffix: str
    title: str
    pieces: Callable[[ExportRequest], Iterator[str]]
    size: Callable[[Benchmark], int] = lambda benchmark: 1
    schemes: frozenset[str] | None = None

    def fits(self, benchmark: Benchmark) -> bool:
        return self.schemes is None or benchmark.scheme in self.schemes


_FORMATS: dict[str, ExportFormat] = {}


def register_export_format(export_format: ExportFormat) -> ExportFormat:
    """Offer ``export_format`` under its name (the schemes' formats register in ``analysis.apps``)."""
    _FORMATS[export_format.name] = export_format
    return export_format


def export_format(name: str) -> ExportFormat | None:
    return _FORMATS.get(name)


def export_formats(benchmark: Benchmark | None = None) -> list[ExportFormat]:
    """The registered formats in registration order; with ``benchmark``, those that fit its scheme."""
    return [found for found in _FORMATS.values() if benchmark is None or found.fits(benchmark)]


def export_format_names() -> list[str]:
    return list(_FORMATS)


def unknown_format(name: str, benchmark: Benchmark | None = None) -> str | None:
    """Why ``name`` cannot export ``benchmark`` (unknown, or not of its scheme), or None when it can."""
    found = export_format(name)
    if found is None:
        return f"unknown export format {name!r}; expected one of {', '.join(_FORMATS)}"
    if benchmark is not None and not found.fits(benchmark):
        fitting = ", ".join(candidate.name for candidate in export_formats(benchmark))
        return f"the {name} format does not export {benchmark.scheme} benchmarks; expected one of {fitting}"
    return None


def _labels_size(benchmark: Benchmark) -> int:
    return benchmark_valid_labels(benchmark=benchmark).count()


def _candidates_size(benchmark: Benchmark) -> int:
    return Candidate.objects.filter(target__benchmark=benchmark).count()


def _swords_size(benchmark: Benchmark) -> int:
    contexts = Context.objects.filter(benchmark=benchmark).count()
    targets = Target.objects.filter(benchmark=benchmark).count()
    return contexts + targets + _candidates_size(benchmark) + _labels_size(benchmark)


def _statistics_pieces(request: ExportRequest) -> Iterator[str]:
    yield json.dumps(request.statistics(), indent=2) + "\n"


register_export_format(
    ExportFormat(
        SWORDS,
        ".json",
        "SWORDS JSON (readable by the swords library)",
        lambda request: swords_pieces(benchmark=request.benchmark, counter=request.counter),
        _swords_size,
        schemes=frozenset({SWORDS}),
    )
)
register_export_format(
    ExportFormat(
        LABELS_CSV,
        ".csv",
        "labels, one row per label (CSV)",
        lambda request: csv_pieces(LABEL_COLUMNS, label_rows(benchmark=request.benchmark), request.counter),
        _labels_size,
    )
)
register_export_format(
    ExportFormat(
        CANDIDATES_CSV,
        ".csv",
        "candidates with scores, one row per candidate (CSV)",
        lambda request: csv_pieces(CANDIDATE_COLUMNS, candidate_rows(benchmark=request.benchmark), request.counter),
        _candidates_size,
    )
)
register_export_format(
    ExportFormat(STATS, ".json", "statistics, agreement and figures of the scheme (JSON)", _statistics_pieces)
)


# --- entry point -----------------------------------------------------------------------------


def export_pieces(
    *,
    benchmark: Benchmark,
    format: str,
    statistics: Callable[[], dict[str, Any]],
    progress: Progress | None = None,
) -> Iterator[str]:
    """The text of one export format, in pieces of a row or an entry each.

    ``progress(done, total)`` is called every few thousand rows; ``statistics`` builds the
    document of the ``stats`` format.
    """
    problem = unknown_format(format, benchmark)
    if problem is not None:
        raise ValueError(problem)
    chosen = _FORMATS[format]
    with scans_without_jit():
        counter = RowCounter(chosen.size(benchmark) if progress else 0, progress)
        yield from chosen.pieces(ExportRequest(benchmark=benchmark, counter=counter, statistics=statistics))
        counter.finish()


def batched_text(pieces: Iterable[str], size: int = 64 * 1024) -> Iterator[str]:
    """Join small pieces into chunks of about ``size`` characters (fewer writes, fewer HTTP chunks)."""
    buffer: list[str] = []
    length = 0
    for piece in pieces:
        buffer.append(piece)
        length += len(piece)
        if length >= size:
            yield "".join(buffer)
            buffer, length = [], 0
    if buffer:
        yield "".join(buffer)
