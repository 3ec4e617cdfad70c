"""Candidates from a source other than a file: WordNet 3.0, or a language model (``llm``).

Adding them is an import like any other, under the origin ``wordnet`` (or ``llm:<model>``): the
same writer merges a candidate the target already has (its sources gain the source's name) and
creates the others, the report says how many were new, and ``import_delete`` removes them again.
WordNet's are added in one transaction; a model's target by target (``annotation.llm``), so a
long run that stops keeps what it stored and resumes where it stopped.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import overload

from django.contrib.auth.models import User
from django.db import transaction

from annotation.activity import activity_record
from annotation.importers.records import CandidateRecord, TargetRecord, Where
from annotation.importers.report import ImportReport
from annotation.importers.writer import BenchmarkWriter
from annotation.llm import LLM, ModelReport, ModelRequest, PromptRefused, candidates_from_model
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


#: Where candidates can come from offline, by the name their source is stored under.
CANDIDATE_SOURCES: dict[str, Callable[..., list[str]]] = {WORDNET: wordnet_candidates}
#: Every source ``candidates_add`` takes: the offline ones, and a language model (``--model``).
SOURCE_NAMES: tuple[str, ...] = (*CANDIDATE_SOURCES, LLM)


def _lemmatized(benchmark: Benchmark) -> bool:
    """Whether the benchmark's candidates are lemmas: yes, unless the facts an import format kept of
    its file (``Benchmark.extra[<format>]``) say ``substitutes_lemmatized: false``."""
    facts = [found for found in benchmark.extra.values() if isinstance(found, dict)]
    return all(found.get("substitutes_lemmatized", True) is not False for found in facts)


def targets_chosen(*, benchmark: Benchmark, targets: Sequence[str] | None) -> list[Target]:
    """The benchmark's targets (with their contexts) in id order: all, or those whose id or word is in ``targets``."""
    chosen = list(Target.objects.filter(benchmark=benchmark).select_related("context").order_by("id"))
    if targets:
        wanted = {name.casefold() for name in targets}
        chosen = [target for target in chosen if str(target.pk) in wanted or target.word.casefold() in wanted]
        if not chosen:
            raise ValueError(f"no target of {benchmark.name} has the id or word {', '.join(targets)}")
    return chosen


@overload
def candidates_add(
    *,
    benchmark: Benchmark,
    source: str,
    targets: Sequence[str] | None = None,
    created_by: User | None = None,
    model: None = None,
    dry_run: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> ImportReport: ...


@overload
def candidates_add(
    *,
    benchmark: Benchmark,
    source: str,
    targets: Sequence[str] | None = None,
    created_by: User | None = None,
    model: ModelRequest,
    dry_run: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> ModelReport: ...


def candidates_add(
    *,
    benchmark: Benchmark,
    source: str,
    targets: Sequence[str] | None = None,
    created_by: User | None = None,
    model: ModelRequest | None = None,
    dry_run: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> ImportReport | ModelReport:
    """Add candidates from ``source`` to the benchmark's targets (all, or those whose id or word is
    in ``targets``), as one import under the source's name; repeatable (a second run adds nothing).

    Candidates are lemmas unless a file imported into the benchmark said otherwise. Runs under
    the benchmark's row lock, as imports do. ``llm`` asks the model ``model`` names
    (``annotation.llm.candidates_from_model``: target by target, resumable; ``dry_run`` asks nothing
    and estimates the cost; ``progress(done, total)`` after each target).
    """
    if source not in SOURCE_NAMES:
        raise ValueError(f"unknown candidate source {source!r}; expected one of {', '.join(SOURCE_NAMES)}")
    if source == LLM:
        if model is None:
            raise ValueError("the llm source needs a model to ask (--model)")
        try:
            return candidates_from_model(
                benchmark=benchmark,
                request=model,
                targets=targets_chosen(benchmark=benchmark, targets=targets),
                lemmatized=_lemmatized(benchmark),
                created_by=created_by,
                dry_run=dry_run,
                progress=progress,
            )
        except PromptRefused as exc:
            raise ValueError(str(exc)) from exc
    generate = CANDIDATE_SOURCES[source]
    started = time.perf_counter()
    chosen = targets_chosen(benchmark=benchmark, targets=targets)
    lemmatized = _lemmatized(benchmark)
    report = ImportReport(benchmark=benchmark.name, origin=source, format=source)
    with transaction.atomic():
        benchmark = Benchmark.objects.select_for_update(no_key=True).get(pk=benchmark.pk)
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
