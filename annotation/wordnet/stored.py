"""WordNet's lemmas stored once per text (docs/design.md §10, "Stored lemmas").

The evaluation compares candidates by their lemma for the target's part of speech. Lemmatising
every candidate of a benchmark on each computation costs seconds at its size (hundreds of thousands
of texts, more than a process remembers); stored in ``Lemma`` (one row a text, a column per
WordNet part of speech) the lemmas are read with the candidates, by a join on the text, and a
text is lemmatised once for all benchmarks.

Nothing that creates candidates has to fill them: a reader lemmatises the texts it finds without a
stored lemma and stores them (``lemmas_missing``), so a candidate from any path (an import, the
API, a generator, a text edited in the data browser) is read right, and pays WordNet once.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.db.models import Case, F, When
from django.db.models.expressions import Expression

from annotation.models import Lemma, PartOfSpeech
from annotation.wordnet import lemmatize, wordnet_pos

#: The column of ``Lemma`` that holds each WordNet part of speech.
LEMMA_COLUMNS = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}


def lemma_column(pos: str) -> str:
    """The column of ``Lemma`` holding the lemma for our part of speech ``pos`` (anything else is
    read as a noun, as ``annotation.wordnet.wordnet_pos`` reads it)."""
    return LEMMA_COLUMNS[wordnet_pos(pos)]


def stored_lemma(*, candidate: str, pos: str) -> Expression:
    """The stored lemma of a candidate's text for its target's part of speech, as an expression over
    rows that reach the candidate by ``candidate`` (a path, ``""`` on candidates themselves) and the
    target's part of speech by ``pos``; null where none is stored yet."""
    lemmas = f"{candidate}__lemmas" if candidate else "lemmas"
    return Case(
        *(
            When(**{pos: value}, then=F(f"{lemmas}__{lemma_column(value)}"))
            for value in PartOfSpeech.values
            if lemma_column(value) != LEMMA_COLUMNS["n"]
        ),
        default=F(f"{lemmas}__{LEMMA_COLUMNS['n']}"),
    )


def lemmas_missing(*, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """WordNet's lemma of each (text, part of speech) of ``pairs`` (ours: ``PartOfSpeech``), which a
    reader found without a stored one, by (text, WordNet's part of speech); stored for every later
    reader, a statement per ``LEMMA_STORE_BATCH`` texts. Stored a column at a time, each column's
    rows by text in a transaction of their own (the evaluation calls this outside any transaction):
    two readers storing the same texts lock them in the same order, so one waits for the other
    rather than deadlock, and each writes what WordNet gives, the same whoever is first."""
    found: dict[tuple[str, str], str] = {}
    for text, pos in pairs:
        key = (text, wordnet_pos(pos))
        if key not in found:
            found[key] = lemmatize(text, pos=pos)
    by_column: dict[str, list[Lemma]] = {column: [] for column in LEMMA_COLUMNS.values()}
    for (text, letter), lemma in sorted(found.items()):
        column = LEMMA_COLUMNS[letter]
        by_column[column].append(Lemma(text=text, **{column: lemma}))
    for column, rows in by_column.items():
        if not rows:
            continue
        # A text already stored keeps its other columns: only this one is written.
        Lemma.objects.bulk_create(
            rows,
            batch_size=settings.LEMMA_STORE_BATCH,
            update_conflicts=True,
            unique_fields=["text"],
            update_fields=[column],
        )
    return found
