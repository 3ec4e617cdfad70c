"""The ids the swords library gives targets (``t:`` and a SHA-1), read from the database: splits
and the evaluation name targets by them, whatever the scheme of the benchmark."""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models.fields.json import KT

from analysis import swords
from analysis.selectors import CHUNK_SIZE, in_split
from annotation.models import Benchmark, Target


def pos_tag(pos: str) -> str:
    """Our part of speech as the swords library tags it (NOUN, VERB, ADJ, ADV)."""
    return swords.POS_TAGS.get(pos, pos.upper())


# The word and tag of a target as an imported file in the library's format spelled them (kept by
# that import in ``Target.extra``); the ids are computed from them when present.
FILE_WORD = KT("extra__swords__target")
FILE_POS = KT("extra__swords__pos")


def swords_target_ids(benchmark: Benchmark, split: str | None = None) -> Iterator[tuple[int, str]]:
    """(pk, SWORDS id) of each target (of a split), by pk, reading only what the id needs."""
    rows = (
        in_split(Target.objects.filter(benchmark=benchmark), split, "")
        .order_by("id")
        .values_list("id", "word", "offset", "pos", FILE_WORD, FILE_POS, "context__text")
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
