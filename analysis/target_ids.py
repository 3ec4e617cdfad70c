"""The ids the swords library gives targets (``t:`` and a SHA-1), read from the database: splits
and the evaluation name targets by them, whatever the scheme of the benchmark.

A scheme whose import keeps a target's word and tag as its file spelled them (in ``Target.extra``)
says where (``schemes.base.FileSpelling``); the ids are computed from those where present."""

from __future__ import annotations

from collections.abc import Collection, Iterator

from django.db.models import Value
from django.db.models.fields.json import KT

from analysis import swords
from analysis.selectors import CHUNK_SIZE, in_split
from annotation.models import Benchmark, Target
from schemes import get_scheme
from schemes.base import scheme_file_spelling


def pos_tag(pos: str) -> str:
    """Our part of speech as the swords library tags it (NOUN, VERB, ADJ, ADV)."""
    return swords.POS_TAGS.get(pos, pos.upper())


def swords_target_ids(
    benchmark: Benchmark, split: str | None = None, target_ids: Collection[int] | None = None
) -> Iterator[tuple[int, str]]:
    """(pk, SWORDS id) of each target (of a split; of ``target_ids`` alone when given), by pk,
    reading only what the id needs."""
    spelling = scheme_file_spelling(get_scheme(benchmark))
    file_word, file_pos = (
        (KT(spelling.word_path), KT(spelling.pos_path)) if spelling is not None else (Value(None), Value(None))
    )
    targets = Target.objects.filter(benchmark=benchmark)
    if target_ids is not None:
        targets = targets.filter(pk__in=list(target_ids))
    rows = (
        in_split(targets, split, "")
        .order_by("id")
        .values_list("id", "word", "offset", "pos", file_word, file_pos, "context__text")
    )
    for pk, word, offset, pos, file_word, file_pos, context_text in rows.iterator(chunk_size=CHUNK_SIZE):
        yield (
            pk,
            swords.target_id(
                context_id=swords.context_id(context_text),
                word=file_word if file_word is not None else word,
                offset=offset,
                pos=file_pos if file_pos is not None else pos_tag(pos),
            ),
        )
