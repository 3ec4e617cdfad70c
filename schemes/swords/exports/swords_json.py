"""The SWORDS JSON format, streamed (readable by the SWORDS library, importable back byte-exact);
the candidates a researcher excluded are left out (``analysis.selectors.benchmark_candidates``)."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from typing import Any

from django.contrib.postgres.aggregates import ArrayAgg
from django.db.models import Case, CharField, F, OuterRef, Q, QuerySet, Subquery, TextField, Value, When
from django.db.models.functions import Cast

from analysis import swords
from analysis.exports.base import RowCounter, benchmark_label_set
from analysis.selectors import (
    CHUNK_SIZE,
    benchmark_candidates,
    collection_order,
    in_split,
    reannotation_origin,
    stream_rows,
)
from analysis.target_ids import pos_tag, swords_target_ids
from annotation.models import Benchmark, Context, Label, Target
from crowdlex.dialect import dialect


def _swords_facts(row_extra: Any) -> dict[str, Any] | None:
    """What the importer kept of a SWORDS object (None for rows created here)."""
    if isinstance(row_extra, dict) and isinstance(row_extra.get("swords"), dict):
        return row_extra["swords"]
    return None


def _contexts(benchmark: Benchmark, split: str | None) -> Iterator[tuple[str, dict[str, Any]]]:
    contexts = Context.objects.filter(benchmark=benchmark)
    if split is not None:
        contexts = contexts.filter(pk__in=in_split(Target.objects.all(), split, "").values("context_id"))
    rows = contexts.order_by("id").values_list("text", "extra")
    for text, extra in rows.iterator(chunk_size=CHUNK_SIZE):
        item: dict[str, Any] = {"context": text}
        facts = _swords_facts(extra)
        if facts is not None and "extra" in facts:
            item["extra"] = facts["extra"]
        yield swords.context_id(text), item


def _targets(benchmark: Benchmark, split: str | None) -> Iterator[tuple[str, dict[str, Any]]]:
    """(SWORDS id, SWORDS object) of each target, by pk."""
    rows = (
        in_split(Target.objects.filter(benchmark=benchmark), split, "")
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
            "pos": facts.get("pos", pos_tag(pos)) if facts is not None else pos_tag(pos),
        }
        if facts is not None:
            if "extra" in facts:
                item["extra"] = facts["extra"]
        elif lemma:
            item["extra"] = {"lemma": lemma}
        yield swords.target_id(context_id=cid, word=item["target"], offset=offset, pos=item["pos"]), item


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


def _labeled_candidates(benchmark: Benchmark, split: str | None) -> Iterator[tuple[int, int, str, str, str, list[str]]]:
    """(pk, target pk, text, sources JSON, extra JSON, label names) of candidates with a valid label,
    by target then pk, the names in collection order.

    On PostgreSQL each candidate's names are gathered by a subquery over the label index on
    (candidate, id), so the labels arrive already grouped and ordered: no sort of all the labels,
    and one row per candidate rather than one per label. Elsewhere the labels are a second stream
    in the same order, walked beside the candidates.
    """
    candidates = benchmark_candidates(benchmark=benchmark, split=split).order_by("target_id", "id")
    columns = ("id", "target_id", "text", Cast("sources", TextField()), Cast("extra", TextField()))
    if dialect().ordered_aggregates:
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
        benchmark_label_set(benchmark, split)
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


def _substitutes(benchmark: Benchmark, split: str | None) -> Iterator[tuple[str, str, list[str]]]:
    """(SWORDS id, rendered SWORDS object, label names) of candidates with a valid label, by target then pk.

    Labeled candidates and targets are two streams in the same order, walked side by side. A
    substitute without labels is left out: the swords library refuses one.
    """
    targets = swords_target_ids(benchmark, split)
    rendered_extra = _RenderedExtra()
    target_pk, tid = -1, ""
    for _pk, candidate_target, text, sources_text, extra_text, names in _labeled_candidates(benchmark, split):
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


def swords_pieces(*, benchmark: Benchmark, counter: RowCounter, split: str | None = None) -> Iterator[str]:
    """The benchmark (or one split of it) as a SWORDS dataset, piece by piece.

    Substitutes and their labels come from one walk over the candidates; the labels section,
    which the format puts after all substitutes, waits in a temporary file meanwhile.
    """
    facts = _file_facts(benchmark)
    encoder = swords.SwordsEncoder()
    yield from encoder.mapping("contexts", _counted(_contexts(benchmark, split), counter))
    yield from encoder.mapping("targets", _counted(_targets(benchmark, split), counter))
    if "extra" in facts:
        yield encoder.value("extra", facts["extra"])
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as labels_section:
        entries = [encoder.member("substitutes")]
        label_entries: list[str] = []
        count = 0
        for sid, item, names in _substitutes(benchmark, split):
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
        # Our candidates are lemmas (docs/design.md §2); an imported file says for itself.
        yield encoder.value("substitutes_lemmatized", bool(facts.get("substitutes_lemmatized", True)))
        yield encoder.member("substitute_labels")
        labels_section.seek(0)
        while chunk := labels_section.read(64 * 1024):
            yield chunk
        yield swords.mapping_end(count)
    yield encoder.close()
