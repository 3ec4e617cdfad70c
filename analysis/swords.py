"""Writing the public SWORDS JSON format (Lee et al. 2021) as a stream.

The file is what ``json.dump(dataset.as_dict(), f, indent=2)`` of the ``swords`` library's
``LexSubDataset`` gives: ``contexts``, ``targets``, ``substitutes`` (objects keyed by id),
``substitutes_lemmatized`` and ``substitute_labels`` (substitute id -> labels in collection order,
as ``TRUE`` / ``FALSE`` / ``UNSURE``). The writer emits the same bytes ``json.dumps(..., indent=2)``
would, one entry at a time, so an export never holds the dataset in memory.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from json.encoder import encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any

# Our parts of speech and their Universal Dependencies tags, as the swords library names them.
POS_TAGS = {"noun": "NOUN", "verb": "VERB", "adj": "ADJ", "adv": "ADV"}
LABEL_NAMES = {"accept": "TRUE", "reject": "FALSE", "abstain": "UNSURE"}
SWORDS_LABELS = frozenset({"TRUE", "TRUE_IMPLICIT", "FALSE", "FALSE_IMPLICIT", "UNSURE"})


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


# The library hashes json.dumps(fields, sort_keys=True); these build that same text directly
# (keys in sorted order, default separators, ASCII escapes), which is what the ids of a large
# export cost. tests/analysis/test_swords_format.py checks them against json.dumps.


def context_id(text: str) -> str:
    """``c:`` + SHA-1 of the context: case-sensitive."""
    return "c:" + _sha1('{"context": ' + encode_basestring_ascii(text) + "}")


def target_id(*, context_id: str, word: str, offset: int, pos: str | None) -> str:
    """``t:`` + SHA-1 of the context id, the lower-cased target, its offset and its tag."""
    return "t:" + _sha1(
        '{"context_id": '
        + encode_basestring_ascii(context_id)
        + ', "offset": '
        + json.dumps(offset)
        + ', "pos": '
        + (encode_basestring_ascii(pos) if pos is not None else "null")
        + ', "target": '
        + encode_basestring_ascii(word.lower())
        + "}"
    )


def substitute_id(*, target_id: str, text: str) -> str:
    """``s:`` + SHA-1 of the target id and the lower-cased substitute."""
    return "s:" + _sha1(
        '{"substitute": '
        + encode_basestring_ascii(text.lower())
        + ', "target_id": '
        + encode_basestring_ascii(target_id)
        + "}"
    )


def label_name(value: str, raw_value: str = "") -> str:
    """The SWORDS name of a label; an imported name such as ``TRUE_IMPLICIT`` is kept as it was."""
    if raw_value in SWORDS_LABELS:
        return raw_value
    return LABEL_NAMES[value]


def _key(key: Any) -> str:
    """A mapping key as json.dumps writes it: keys that are not strings become strings first."""
    if isinstance(key, str):
        return encode_basestring_ascii(key)
    if key is True or key is False or key is None:
        return '"' + json.dumps(key) + '"'
    if isinstance(key, int | float):
        return '"' + json.dumps(key) + '"'
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def render(value: Any, level: int) -> str:
    """``value`` as ``json.dumps(value, indent=2)`` prints it ``level`` objects deep.

    The standard library's encoder falls back to pure Python as soon as ``indent`` is set; this
    printer does the same job for plain JSON values several times faster, which is most of
    the time of a large export.
    """
    if isinstance(value, str):
        return encode_basestring_ascii(value)
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = "\n" + "  " * (level + 1)
        parts = [_key(key) + ": " + render(item, level + 1) for key, item in value.items()]
        return "{" + inner + ("," + inner).join(parts) + "\n" + "  " * level + "}"
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        inner = "\n" + "  " * (level + 1)
        if all(type(item) is str for item in value):
            return "[" + inner + ("," + inner).join(map(encode_basestring_ascii, value)) + "\n" + "  " * level + "]"
        return "[" + inner + ("," + inner).join(render(item, level + 1) for item in value) + "\n" + "  " * level + "]"
    return json.dumps(value)


def label_list(names: list[str]) -> str:
    """A substitute's label names as a mapping value (``render(names, 2)`` for the fixed label names)."""
    if not names:
        return "[]"
    return '[\n      "' + '",\n      "'.join(names) + '"\n    ]'


def substitute_object(*, target_id: str, text: str, extra: str | None) -> str:
    """A substitute as a mapping value; ``extra`` is already rendered three levels deep, or None."""
    head = '{\n      "target_id": ' + encode_basestring_ascii(target_id)
    head += ',\n      "substitute": ' + encode_basestring_ascii(text)
    if extra is not None:
        head += ',\n      "extra": ' + extra
    return head + "\n    }"


def raw_mapping_entry(key: str, rendered: str, *, first: bool) -> str:
    """Like ``mapping_entry`` for a value rendered already."""
    return ("{" if first else ",") + "\n    " + encode_basestring_ascii(key) + ": " + rendered


def mapping_entry(key: str, value: Any, *, first: bool) -> str:
    """One ``key: value`` entry of a top-level mapping (``first`` opens the mapping)."""
    return ("{" if first else ",") + "\n    " + _key(key) + ": " + render(value, 2)


def mapping_end(entries: int) -> str:
    return "{}" if entries == 0 else "\n  }"


class SwordsEncoder:
    """Encodes the top-level object one member, and within a mapping one entry, at a time.

    ``mapping("contexts", pairs)`` yields the text of a keyed section entry by entry,
    ``value(...)`` returns a scalar member's text, ``member(name)`` the head of a member whose
    value the caller writes itself (with ``mapping_entry`` and ``mapping_end``), ``close()`` the
    closing brace. Members appear in the order encoded; concatenated, the pieces are the file.
    """

    def __init__(self) -> None:
        self._members = 0
        self._closed = False

    def member(self, name: str) -> str:
        if self._closed:
            raise ValueError("the encoder is closed")
        self._members += 1
        return ("{" if self._members == 1 else ",") + "\n  " + _key(name) + ": "

    def value(self, name: str, value: Any) -> str:
        return self.member(name) + render(value, 1)

    def mapping(self, name: str, entries: Iterable[tuple[str, Any]]) -> Iterator[str]:
        """``name: {key: value, ...}`` from a stream of pairs, one piece per entry."""
        head = self.member(name)
        count = 0
        for key, value in entries:
            yield head + mapping_entry(key, value, first=count == 0)
            head = ""
            count += 1
        yield head + mapping_end(count)

    def close(self) -> str:
        if self._closed:
            return ""
        self._closed = True
        return "{}" if self._members == 0 else "\n}"
