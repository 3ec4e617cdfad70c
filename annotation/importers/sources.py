"""Candidates from a source other than a file: WordNet 3.0.

Adding them is an import like any other, under the origin ``wordnet``: the same writer merges a
candidate the target already has (its sources gain ``wordnet``) and creates the others, the
report says how many were new, and ``import_delete`` removes them again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence

from django.contrib.auth.models import User
from django.db import transaction

from annotation.activity import activity_record
from annotation.importers.records import CandidateRecord, TargetRecord, Where
from annotation.importers.report import ImportReport
from annotation.importers.writer import BenchmarkWriter
from annotation.models import ActivityKind, Benchmark, Import, Target, normalize_candidate
from annotation.wordnet import inflect_like, lemmatize, synonyms

WORDNET = "wordnet"


def wordnet_candidates(target: Target, *, lemmatized: bool) -> list[str]:
    """WordNet's synonyms and similar words of the target's lemma for its part of speech; inflected
    like the target's word when the benchmark's candidates are not lemmas."""
    lemma = target.lemma or lemmatize(target.word, pos=target.pos)
    found = synonyms(lemma, pos=target.pos)
    if lemmatized:
        return list(found)
    return [inflect_like(text, word=target.word, lemma=lemma, pos=target.pos) for text in found]


#: Where candidates can come from, by the name their source is stored under.
CANDIDATE_SOURCES: dict[str, Callable[..., list[str]]] = {WORDNET: wordnet_candidates}


def _lemmatized(benchmark: Benchmark) -> bool:
    """Whether the benchmark's candidates are lemmas: yes, unless the facts an import format kept of
    its file (``Benchmark.extra[<format>]``) say ``substitutes_lemmatized: false``."""
    facts = [found for found in benchmark.extra.values() if isinstance(found, dict)]
    return all(found.get("substitutes_lemmatized", True) is not False for found in facts)


def candidates_add(
    *,
    benchmark: Benchmark,
    source: str,
    targets: Sequence[str] | None = None,
    created_by: User | None = None,
) -> ImportReport:
    """Add candidates from ``source`` to the benchmark's targets (all, or those whose id or word is
    in ``targets``), as one import under the source's name; repeatable (a second run adds nothing).

    Candidates are lemmas unless a file imported into the benchmark said otherwise. Runs under
    the benchmark's row lock, as imports do.
    """
    if source not in CANDIDATE_SOURCES:
        raise ValueError(f"unknown candidate source {source!r}; expected one of {', '.join(CANDIDATE_SOURCES)}")
    generate = CANDIDATE_SOURCES[source]
    started = time.perf_counter()
    chosen = list(Target.objects.filter(benchmark=benchmark).select_related("context").order_by("id"))
    if targets:
        wanted = {name.casefold() for name in targets}
        chosen = [target for target in chosen if str(target.pk) in wanted or target.word.casefold() in wanted]
        if not chosen:
            raise ValueError(f"no target of {benchmark.name} has the id or word {', '.join(targets)}")
    lemmatized = _lemmatized(benchmark)
    report = ImportReport(benchmark=benchmark.name, origin=source, format=source)
    with transaction.atomic():
        benchmark = Benchmark.objects.select_for_update().get(pk=benchmark.pk)
        import_record, _ = Import.objects.get_or_create(
            benchmark=benchmark, origin=source, defaults={"created_by": created_by}
        )
        writer = BenchmarkWriter(benchmark=benchmark, import_record=import_record, report=report)
        writer.add_all(_records(chosen, source=source, texts=lambda target: generate(target, lemmatized=lemmatized)))
        activity_record(
            benchmark=benchmark,
            kind=ActivityKind.IMPORTED,
            summary=f"added candidates from {source}: {report.candidates.created} new",
            by=created_by,
            result={"origin": source, "format": source, "candidates": report.candidates.created},
        )
    report.seconds = time.perf_counter() - started
    return report


def _records(targets: Sequence[Target], *, source: str, texts: Callable[[Target], list[str]]) -> Iterator[TargetRecord]:
    for target in targets:
        where = Where(file=source, item=f"target {target.pk}")
        yield TargetRecord(
            where=where,
            context_text=target.context.text,
            word=target.word,
            offset=target.offset,
            pos=target.pos,
            lemma=target.lemma,
            candidates=[
                CandidateRecord(
                    text=text, normalized=normalize_candidate(text), sources=[source], labels=[], where=where
                )
                for text in texts(target)
            ],
        )
