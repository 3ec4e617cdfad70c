"""The ids the swords library gives targets (``t:`` and a SHA-1), read from the database: splits
and the evaluation name targets by them, whatever the scheme of the benchmark.

A scheme whose import keeps a target's word and tag as its file spelled them (in ``Target.extra``)
says where (``schemes.base.FileSpelling``); the ids are computed from those where present."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from typing import Any

from django.db.models import QuerySet, Value
from django.db.models.fields.json import KT

from analysis import swords
from analysis.selectors import CHUNK_SIZE, in_split
from annotation.models import Benchmark, Target
from crowdlex.statements import shaped_rows
from schemes import get_scheme
from schemes.base import scheme_file_spelling


def pos_tag(pos: str) -> str:
    """Our part of speech as the swords library tags it (NOUN, VERB, ADJ, ADV)."""
    return swords.POS_TAGS.get(pos, pos.upper())


def _target_rows(
    benchmark_id: int, split: str | None, target_ids: list[int] | None, word_path: str | None, pos_path: str | None
) -> QuerySet[Target, tuple[Any, ...]]:
    file_word, file_pos = (
        (KT(word_path), KT(pos_path)) if word_path is not None and pos_path is not None else (Value(None), Value(None))
    )
    targets = Target.objects.filter(benchmark_id=benchmark_id)
    if target_ids is not None:
        targets = targets.filter(pk__in=target_ids)
    return (
        in_split(targets, split, "")
        .order_by("id")
        .values_list("id", "word", "offset", "pos", file_word, file_pos, "context__text")
    )


def swords_target_ids(
    benchmark: Benchmark, split: str | None = None, target_ids: Collection[int] | None = None
) -> Iterator[tuple[int, str]]:
    """(pk, SWORDS id) of each target (of a split; of ``target_ids`` alone when given), by pk,
    reading only what the id needs."""
    _, rows = swords_target_rows(benchmark, split, target_ids)
    for pk, swords_id, *_ in rows:
        yield pk, swords_id


def swords_target_rows(
    benchmark: Benchmark, split: str | None = None, target_ids: Collection[int] | None = None
) -> tuple[str | None, Iterator[tuple[int, str, str, str, str | None]]]:
    """Where the benchmark's scheme keeps a file's spelling of a target's word (``FileSpelling``'s
    ``word_path``; None: nowhere), and (pk, SWORDS id, word, part of speech, the file's spelling of
    the word or None) of each target, as ``swords_target_ids`` reads them: a reader that needs the
    words too reads them with the ids, in one statement."""
    spelling = scheme_file_spelling(get_scheme(benchmark))
    paths = (None, None) if spelling is None else (spelling.word_path, spelling.pos_path)
    rows: Iterable[tuple[Any, ...]]
    if target_ids is None:
        rows = _target_rows(benchmark.pk, split, None, *paths).iterator(chunk_size=CHUNK_SIZE)
    else:
        # Some targets (a submit's first reader of the evaluation): the statement built by the ORM
        # once per process (``crowdlex.statements.shaped_rows``).
        rows = shaped_rows(_target_rows, benchmark.pk, split, list(target_ids), *paths)
    return paths[0], _with_ids(rows)


def _with_ids(rows: Iterable[tuple[Any, ...]]) -> Iterator[tuple[int, str, str, str, str | None]]:
    for pk, word, offset, pos, file_word, file_pos, context_text in rows:
        swords_id = swords.target_id(
            context_id=swords.context_id(context_text),
            word=file_word if file_word is not None else word,
            offset=offset,
            pos=file_pos if file_pos is not None else pos_tag(pos),
        )
        yield pk, swords_id, word, pos, file_word
