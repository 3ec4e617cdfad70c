"""Reading JSON that the database can store: the checks ``json.loads`` does not make.

``json.loads`` accepts what PostgreSQL refuses (NUL characters and lone surrogates in strings,
NaN and Infinity in a JSON column), keeps the last of a repeated key without a word, and crashes
on integers too long to convert and on nesting deeper than Python's recursion limit. Here each of
these becomes a :class:`JsonValueError` that names the place, by the path of keys and list
indexes from the top, so the caller can name the line, id and field.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from typing import Any

from annotation.importers.errors import SHOWN_LENGTH, shown
from annotation.importers.records import unstorable_text

# Deeper objects are refused whatever Python's stack allows, so the limit does not depend on where
# the import runs (a web request is deeper in the stack than a command). SWORDS files nest 5 levels.
MAX_DEPTH = 100

JsonPath = tuple[str | int, ...]


class JsonValueError(ValueError):
    """A value the import refuses, at ``path`` from the top; ``line`` only when the path is unknown."""

    def __init__(self, message: str, path: JsonPath, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line


def field_name(path: JsonPath) -> str:
    """``candidates[0].labels[2]`` for ``("candidates", 0, "labels", 2)``, cut short if very long."""
    name = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path).removeprefix(".")
    return name if len(name) <= SHOWN_LENGTH else name[: SHOWN_LENGTH - 1] + "…"


def load_json(text: str) -> Any:
    """Parse JSON text: :class:`json.JSONDecodeError` for bad syntax, :class:`JsonValueError` for a
    value that parses but cannot be imported."""
    try:
        value = json.loads(
            text, object_pairs_hook=_object, parse_constant=_constant, parse_int=_integer, parse_float=_float
        )
    except RecursionError:
        raise JsonValueError(_too_deep(), (), line=_line_too_deep(text)) from None
    _check(value, strings=_UNSTORABLE_ESCAPE.search(text) is not None)
    return value


def has_unstorable_escape(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` has an escape that can make a string the database refuses."""
    return _UNSTORABLE_ESCAPE.search(text, start, end) is not None


def check_value(value: Any, path: JsonPath, *, strings: bool) -> None:
    """The checks of :func:`load_json` on a value found at ``path`` of a larger document."""
    _check(value, strings=strings, path=path)


def too_deep_at(text: str, start: int, depth: int) -> int | None:
    """Index in ``text`` of the bracket that nests past MAX_DEPTH, reading from ``start`` at ``depth``."""
    for match in _STRING_OR_BRACKET.finditer(text, start):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return match.start()
        elif token in "]}":
            depth -= 1
    return None


def too_deep_message() -> str:
    return _too_deep()


# How many refused numbers and repeated keys the decoder has met, in any thread: a value decoded
# while this stayed the same holds neither, and its walk can be skipped (see json_stream).
SUSPECTS = [0]


class _Refused:
    """Stands in for a number the import refuses until :func:`_check` finds its place."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        SUSPECTS[0] += 1
        self.message = message


class _RepeatedKey(dict[str, Any]):
    """An object in which ``repeated`` appeared more than once (``json.loads`` would keep the last)."""

    repeated: str


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) == len(pairs):
        return value
    SUSPECTS[0] += 1
    marked = _RepeatedKey(value)
    marked.repeated = next(key for key, count in Counter(key for key, _ in pairs).items() if count > 1)
    return marked


def _constant(name: str) -> _Refused:
    return _Refused(f"{name} is not a number (JSON has no NaN or Infinity)")


def _integer(digits: str) -> int | _Refused:
    try:
        return int(digits)
    except ValueError:  # past Python's limit on digits (4,300)
        return _Refused(f"an integer of {len(digits)} digits is too long")


def _float(text: str) -> float | _Refused:
    number = float(text)
    return number if math.isfinite(number) else _Refused(f"the number {shown(text)} is too large")


def _too_deep() -> str:
    return f"nested more than {MAX_DEPTH} levels deep"


# What PostgreSQL refuses can only reach a parsed string through a \u escape (``json.loads``
# refuses raw control characters, and text decoded from UTF-8 has no surrogates), so strings are
# only looked at one by one when the text has such an escape: most files have none.
_UNSTORABLE_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")


def _check_leaf(value: Any, path: JsonPath, *, strings: bool) -> None:
    if isinstance(value, _Refused):
        raise JsonValueError(value.message, path)
    if strings and isinstance(value, str) and (problem := unstorable_text(value)):
        raise JsonValueError(problem, path)


def _check(value: Any, *, strings: bool, path: JsonPath = ()) -> None:
    """Walk the parsed value (with a stack, not recursion) and refuse the first bad part found."""
    _check_leaf(value, path, strings=strings)
    stack: list[tuple[dict[str, Any] | list[Any], JsonPath]] = [(value, path)] if isinstance(value, dict | list) else []
    while stack:
        node, path = stack.pop()
        if len(path) >= MAX_DEPTH:
            raise JsonValueError(_too_deep(), path)
        if isinstance(node, _RepeatedKey):
            raise JsonValueError("appears twice (the second would silently replace the first)", (*path, node.repeated))
        children = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in children:
            if strings and isinstance(key, str) and (problem := unstorable_text(key)):
                raise JsonValueError(f"the key {problem}", (*path, key))
            if isinstance(child, dict | list):
                stack.append((child, (*path, key)))
            elif isinstance(child, _Refused) or (strings and isinstance(child, str)):
                _check_leaf(child, (*path, key), strings=strings)


# A JSON string, or a bracket: enough to follow the nesting without parsing.
_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _line_too_deep(text: str) -> int:
    """The line on which the nesting passes MAX_DEPTH (only asked once parsing has failed)."""
    index = too_deep_at(text, 0, 0)
    return 1 if index is None else text.count("\n", 0, index) + 1


# The decoder of load_json, for reading one value at a position of a longer text (json_stream).
DECODER = json.JSONDecoder(object_pairs_hook=_object, parse_constant=_constant, parse_int=_integer, parse_float=_float)
