"""The Smart Word Suggestions JSON release (Wang et al. 2023): reading it and writing it back.

``{id: {"sentence": ..., "sentence_split": [tokens], "substitutes": [[[start, end], {suggestion:
votes}, type], ...]}}``: spans are end-exclusive token indices into ``sentence_split`` (they may
overlap), votes the annotators who gave a suggestion, type 1 refine-usage or 2 diversify-expression.
Tokens are Penn-Treebank style (``tokens``); sentences may hold U+00A0.

Each sentence becomes a context (its id the context's ``external_id``) holding its tokens and its
substitutes as released (``Context.extra["sws"]``, in the order written: see ``to_stored``), and a
target that is the whole sentence: the
unit of work when annotators mark it again. The export writes the sentences in id order with
``json.dumps(data, indent=4)``; a file without ``sentence_split`` gets tokens made as the release
makes them.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from annotation.importers import ImportFormat, ParsedFile, register_import_format
from annotation.importers.errors import ImportFailed, shown
from annotation.importers.json_values import JsonValueError, field_name, load_json
from annotation.importers.reading import READ_ERRORS, UTF8_BOM, decode_text, first_keys
from annotation.importers.records import TargetRecord, Where
from annotation.models import normalize_text
from schemes.sws.merge import TYPE_NAMES
from schemes.sws.tokens import TokensMisaligned, align, tokenize

NAME = "sws"


@dataclass
class SwsEntry:
    """One sentence of a release: its id, text, tokens and substitutes as the file writes them."""

    id: str
    sentence: str
    tokens: list[str]
    substitutes: list[list[Any]] = field(default_factory=list)

    def as_release(self) -> dict[str, Any]:
        return {"sentence": self.sentence, "sentence_split": self.tokens, "substitutes": self.substitutes}


def to_stored(substitutes: list[list[Any]]) -> list[list[Any]]:
    """Substitutes as the database keeps them: {suggestion: votes} as [[suggestion, votes], ...],
    since a JSON column does not keep the order of an object's keys."""
    return [[span, list(votes.items()), kind] for span, votes, kind in substitutes]


def from_stored(substitutes: list[list[Any]]) -> list[list[Any]]:
    """Substitutes as the release writes them, from ``to_stored``."""
    return [[span, dict(votes), kind] for span, votes, kind in substitutes]


def _votes(raw: Any, where: Where, field: str) -> dict[str, int]:
    if not isinstance(raw, dict) or not all(
        isinstance(votes, int) and not isinstance(votes, bool) and votes > 0 for votes in raw.values()
    ):
        raise where.error("must map each suggestion to its votes, a positive whole number", field)
    if any(not suggestion.strip() for suggestion in raw):
        raise where.error("a suggestion is empty", field)
    return raw


def _substitute(raw: Any, where: Where, field: str, tokens: int) -> list[Any]:
    if not isinstance(raw, list) or len(raw) != 3:
        raise where.error("must be [[start, end], {suggestion: votes}, type]", field)
    span, votes, kind = raw
    if (
        not isinstance(span, list)
        or len(span) != 2
        or not all(isinstance(index, int) and not isinstance(index, bool) for index in span)
        or not 0 <= span[0] < span[1] <= tokens
    ):
        raise where.error(f"span {shown(span)} is not [start, end] with 0 <= start < end <= {tokens} tokens", field)
    _votes(votes, where, f"{field}[1]")
    if not isinstance(kind, int) or isinstance(kind, bool) or kind not in TYPE_NAMES:
        raise where.error(f"type must be 1 (refine-usage) or 2 (diversify-expression), not {shown(kind)}", field)
    return raw


def _entry(sentence_id: str, raw: Any, file: str) -> SwsEntry:
    where = Where(file, item=sentence_id)
    if not sentence_id.strip():
        raise where.error("an id must not be empty")
    where.check_length(sentence_id, "id", "IMPORT_MAX_ID_LENGTH")
    if not isinstance(raw, dict):
        raise where.error("must be an object with sentence, sentence_split and substitutes")
    unknown = sorted(set(raw) - {"sentence", "sentence_split", "substitutes"})
    if unknown:
        raise where.error(f"unknown fields {', '.join(unknown)}", unknown[0])
    sentence = raw.get("sentence")
    if not isinstance(sentence, str) or not sentence.strip():
        raise where.error("must be a non-empty string", "sentence")
    # The sentence is also the target of its HITs (Target.word and HITItem.text hold any length).
    where.check_length(sentence, "sentence", "IMPORT_MAX_TEXT_LENGTH")
    tokens = raw.get("sentence_split")
    if tokens is None:
        tokens = [token.text for token in tokenize(sentence)]
    if not isinstance(tokens, list) or not all(isinstance(token, str) for token in tokens):
        raise where.error("must be a list of tokens", "sentence_split")
    try:
        align(sentence, tokens)
    except TokensMisaligned as exc:
        raise where.error(str(exc), f"sentence_split[{exc.index}]") from None
    substitutes = raw.get("substitutes", [])
    if not isinstance(substitutes, list):
        raise where.error("must be a list of [[start, end], {suggestion: votes}, type]", "substitutes")
    return SwsEntry(
        id=sentence_id,
        sentence=sentence,
        tokens=tokens,
        substitutes=[
            _substitute(item, where, f"substitutes[{index}]", len(tokens)) for index, item in enumerate(substitutes)
        ],
    )


def parse_sws(stream: io.BufferedIOBase, *, file: str) -> list[SwsEntry]:
    """The whole file (one JSON object), every sentence checked before anything is stored."""
    try:
        raw = stream.read()
    except READ_ERRORS as exc:
        raise ImportFailed(f"cannot read the file: {exc}", file=file) from exc
    try:
        data = load_json(decode_text(raw.removeprefix(UTF8_BOM), file=file))
    except json.JSONDecodeError as exc:
        raise ImportFailed(f"malformed JSON: {exc.msg} at column {exc.colno}", file=file, line=exc.lineno) from exc
    except JsonValueError as exc:
        item = str(exc.path[0]) if exc.path else None
        raise ImportFailed(
            exc.message, file=file, line=exc.line, item=item, field=field_name(exc.path[1:]) or None
        ) from exc
    if not isinstance(data, dict):
        raise ImportFailed("the top level must be an object of sentences keyed by id", file=file, line=1)
    entries = [_entry(sentence_id, value, file) for sentence_id, value in data.items()]
    seen: dict[str, str] = {}
    for entry in entries:
        key = normalize_text(entry.sentence)
        if key in seen:
            raise ImportFailed(f"repeats the sentence of {seen[key]!r}", file=file, item=entry.id, field="sentence")
        seen[key] = entry.id
    return entries


def _records(entries: list[SwsEntry], file: str) -> Iterator[TargetRecord]:
    for entry in entries:
        word = entry.sentence.strip()
        yield TargetRecord(
            where=Where(file, item=entry.id),
            context_text=entry.sentence,
            word=word,
            offset=len(entry.sentence) - len(entry.sentence.lstrip()),
            context_external_id=entry.id,
            context_extra={NAME: {"tokens": entry.tokens, "substitutes": to_stored(entry.substitutes)}},
        )


def _parsed(stream: io.BufferedIOBase, file: str) -> ParsedFile:
    entries = parse_sws(stream, file=file)
    return ParsedFile(records=_records(entries, file), total=len(entries))


# The start of the file up to the first sentence's object: `{"<id>": {`.
_FIRST_ENTRY = re.compile(r'\{\s*"(?:[^"\\]|\\.)*"\s*:\s*(?=\{)')
ENTRY_KEYS = frozenset({"sentence", "sentence_split", "substitutes"})


def _sniff(head: bytes) -> bool:
    """A JSON object whose first value is an object keyed like a sentence of the release. Our JSONL's
    lines hold texts, numbers and lists under their keys, and SWORDS's first value is keyed by ids."""
    text = head.decode("utf-8", errors="replace")
    entry = _FIRST_ENTRY.match(text)
    return entry is not None and bool(ENTRY_KEYS.intersection(first_keys(text[entry.end() :])))


register_import_format(
    ImportFormat(
        NAME,
        "Smart Word Suggestions JSON (sentence, sentence_split, substitutes)",
        _parsed,
        scheme=NAME,
        sniff=_sniff,
    )
)
