"""Reading one large JSON object member by member, in bounded memory (a SWORDS file).

The text is decoded a block at a time and dropped once read; each member of the named sections
(objects keyed by id) is decoded on its own and handed to the caller, which keeps what it needs.
Everything :func:`json_values.load_json` checks is checked and named as it names it: bad syntax
by line and column (worded by the same decoder), a refused value by its path of keys. As with
``load_json``, bad syntax anywhere wins over a refused value, so the first refused value waits
until the whole text has been read.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from typing import Any

from annotation.importers.errors import ImportFailed
from annotation.importers.json_values import (
    DECODER,
    MAX_DEPTH,
    SUSPECTS,
    JsonPath,
    JsonValueError,
    check_value,
    has_unstorable_escape,
    too_deep_at,
    too_deep_message,
)
from annotation.importers.reading import READ_ERRORS, UTF8_BOM
from annotation.importers.records import unstorable_text

# Bytes read at a time: the text held at once is about a block, whatever the size of the file.
BLOCK_BYTES = 1024 * 1024
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_BLANKS = frozenset(" \t\n\r")
_SIMPLE_KEY = re.compile(r'"([^"\\\x00-\x1f]*)"')
_NUMBER_GOES_ON = re.compile(r"[0-9eE.+\-]*")
_NUMBER_CHARACTERS = frozenset("0123456789eE.+-")
# What the decoder is given before our text from a state's position, so that it words an error
# exactly as it would have on the whole text: the object so far, up to that state. After a comma
# it is given the value before it and our text from the comma.
_OPEN, _AFTER_KEY, _AFTER_VALUE = "{", '{"k"', '{"k": 0'
_COMMA = ","
_REPEATED = "appears twice (the second would silently replace the first)"

# (section, id, value) -> whether that id came before in the section.
Member = Callable[[str, str, Any], bool]
# A top-level section read member by member holds this in the returned object.
READ_BY_MEMBER = object()


class JsonText:
    """The decoded text of a binary stream, read a block at a time. Positions are counted from the
    start of the text, whatever has been dropped."""

    def __init__(self, stream: io.BufferedIOBase, *, file: str, block_bytes: int | None = None) -> None:
        self.stream = stream
        self.file = file
        self.block_bytes = block_bytes or BLOCK_BYTES
        self.text = ""
        self.base = 0  # position of text[0]
        self.pos = 0
        self.eof = False
        # Lines ended before ``text``, and characters of its first line that came before it.
        self._lines_before = 0
        self._column_before = 0
        # For UTF-8 errors, counted in bytes as decode_text counts them in the whole file.
        self._bytes_before = 0
        self._byte_lines_before = 0
        self._last_newline_byte = -1
        self._carry = b""
        self._first = True

    def more(self, keep_from: int) -> bool:
        """Read the next block, dropping the text before position ``keep_from``; False at the end."""
        if self.eof:
            return False
        try:
            raw = self.stream.read(self.block_bytes)
        except READ_ERRORS as exc:
            raise ImportFailed(f"cannot read the file: {exc}", file=self.file) from exc
        if self._first:
            raw = raw.removeprefix(UTF8_BOM)
            self._first = False
        data = self._carry + raw
        if raw:
            cut = _complete_utf8(data)
            data, self._carry = data[:cut], data[cut:]
        else:
            self.eof, self._carry = True, b""
        decoded = self._decode(data)
        self._drop(keep_from)
        self.text += decoded
        return True

    def _decode(self, data: bytes) -> str:
        try:
            decoded = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            bad = exc.start
            newline = data.rfind(b"\n", 0, bad)
            position = bad - newline if newline >= 0 else self._bytes_before + bad - self._last_newline_byte
            raise ImportFailed(
                f"not UTF-8 text: byte 0x{data[bad]:02x} at position {position} cannot be decoded "
                "(save the file as UTF-8)",
                file=self.file,
                line=self._byte_lines_before + data.count(b"\n", 0, bad) + 1,
            ) from exc
        newline = data.rfind(b"\n")
        if newline >= 0:
            self._last_newline_byte = self._bytes_before + newline
        self._byte_lines_before += data.count(b"\n")
        self._bytes_before += len(data)
        return decoded

    def _drop(self, keep_from: int) -> None:
        count = keep_from - self.base
        if count <= 0:
            return
        newlines = self.text.count("\n", 0, count)
        if newlines:
            self._lines_before += newlines
            self._column_before = count - self.text.rfind("\n", 0, count) - 1
        else:
            self._column_before += count
        self.text = self.text[count:]
        self.base = keep_from

    def read_all(self) -> str:
        """The rest of the text, nothing dropped; the text from ``base`` on."""
        while self.more(self.base):
            pass
        return self.text

    def skip_whitespace(self, keep_from: int) -> str:
        """The next character that is not blank ("" at the end), leaving ``pos`` on it."""
        # Called between every two tokens: most find a token or one blank at once, without the
        # pattern (matched here, not through _matched_to, for longer runs).
        text, index = self.text, self.pos - self.base
        if index < len(text):
            char = text[index]
            if char not in _BLANKS:
                return char
            index += 1
            if index < len(text) and (char := text[index]) not in _BLANKS:
                self.pos += 1
                return char
        blank = _WHITESPACE.match
        while True:
            text = self.text
            index = blank(text, self.pos - self.base).end()  # type: ignore[union-attr]
            self.pos = self.base + index
            if index < len(text):
                return text[index]
            if not self.more(keep_from):
                return ""

    def line_of(self, position: int) -> int:
        return self._lines_before + self.text.count("\n", 0, position - self.base) + 1

    def column_of(self, position: int) -> int:
        index = position - self.base
        newline = self.text.rfind("\n", 0, index)
        return index - newline if newline >= 0 else self._column_before + index + 1

    def syntax_error(self, message: str, position: int) -> ImportFailed:
        return ImportFailed(
            f"malformed JSON: {message} at column {self.column_of(position)}",
            file=self.file,
            line=self.line_of(position),
        )


def _matched_to(pattern: re.Pattern[str], text: str, start: int) -> int:
    """Where ``pattern`` (which matches the empty string too) stops matching from ``start``."""
    match = pattern.match(text, start)
    assert match is not None
    return match.end()


def _complete_utf8(data: bytes) -> int:
    """Where to cut ``data`` so that no UTF-8 character is split (its start waits for the next block)."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:  # a continuation byte: its lead byte is further back
            continue
        length = 2 if byte >> 5 == 0b110 else 3 if byte >> 4 == 0b1110 else 4 if byte >> 3 == 0b11110 else 1
        return len(data) - back if length > back else len(data)
    return len(data)


class ObjectReader:
    """Reads a JSON object whose ``sections`` are objects keyed by id: ``member`` gets each of
    their members, :meth:`read` returns the other top-level values (and ``READ_BY_MEMBER`` for the
    sections). Raises :class:`ImportFailed` for bad syntax and :class:`JsonValueError` for a
    refused value. A text whose top level is no object goes to ``whole`` as a string."""

    def __init__(self, source: JsonText, *, sections: tuple[str, ...], member: Member) -> None:
        self.source = source
        self.sections = sections
        self.member = member
        self.refused: JsonValueError | None = None

    def read(self, whole: Callable[[str], Any]) -> Any:
        source = self.source
        source.more(0)
        if source.text.startswith("\ufeff"):
            raise source.syntax_error("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0)
        if source.skip_whitespace(0) != "{":
            return whole(source.read_all())
        top: dict[str, Any] = {}
        self._object(top=top)
        if source.skip_whitespace(source.pos):
            raise source.syntax_error("Extra data", source.pos)
        if self.refused is not None:
            raise self.refused
        return top

    def _refuse(self, error: JsonValueError) -> None:
        if self.refused is None:
            self.refused = error

    def _object(self, *, top: dict[str, Any] | None = None, section: str = "") -> None:
        """The object at ``pos``: the top level (values kept in ``top``) or a keyed section."""
        source = self.source
        source.pos += 1
        # Where the decoder would resume: just after the brace, after a value, or at a comma.
        state, state_at = _OPEN, source.pos
        while True:
            char = source.skip_whitespace(state_at)
            if state is not _COMMA and char == "}":
                source.pos += 1
                return
            if state is _AFTER_VALUE:
                if char != ",":
                    self._wording(_AFTER_VALUE, state_at)
                state, state_at = _COMMA, source.pos
                source.pos += 1
                continue
            if char != '"':
                self._wording(_OPEN if state is _OPEN else _AFTER_VALUE, state_at)
            key_at = source.pos
            # A key without escapes or control characters (every id of a SWORDS file) is the text
            # between its quotes; any other, or one running past the text read so far, is decoded.
            simple = _SIMPLE_KEY.match(source.text, key_at - source.base)
            if simple is not None:
                key = simple.group(1)
                source.pos = source.base + simple.end()
            else:
                key = self._decode(state_at, key_at, depth=0)
            key_end = source.pos
            if source.skip_whitespace(state_at) != ":":
                self._wording(_AFTER_KEY, key_end)
            source.pos += 1
            char = source.skip_whitespace(state_at)
            path: JsonPath = (key,) if top is not None else (section, key)
            if (
                simple is None
                and has_unstorable_escape(source.text, key_at - source.base, key_end - source.base)
                and (problem := unstorable_text(key))
            ):
                self._refuse(JsonValueError(f"the key {problem}", path))
            if top is not None:
                if key in top:
                    self._refuse(JsonValueError(_REPEATED, path))
                if key in self.sections and char == "{":
                    self._object(section=key)
                    top[key] = READ_BY_MEMBER
                else:
                    top[key] = self._value(state_at, path, depth=1)
            elif self.member(section, key, self._value(state_at, path, depth=2)):
                self._refuse(JsonValueError(_REPEATED, path))
            state, state_at = _AFTER_VALUE, source.pos

    def _decode(self, keep_from: int, start: int, *, depth: int) -> Any:
        """The value at ``start``, reading on while it runs past the text read so far."""
        source = self.source
        while True:
            try:
                value, end = DECODER.raw_decode(source.text, start - source.base)
            except json.JSONDecodeError as exc:
                if source.more(keep_from):
                    continue
                raise source.syntax_error(exc.msg, source.base + exc.pos) from None
            except RecursionError:
                index = too_deep_at(source.text, start - source.base, depth)
                if index is None and source.more(keep_from):
                    continue
                line = source.line_of(start if index is None else source.base + index)
                raise JsonValueError(too_deep_message(), (), line=line) from None
            # A number may go on in the text not read yet ("1" of "1e999"): only when nothing but
            # its characters follow it (most values are followed by a comma or a bracket).
            text = source.text
            if (
                (end == len(text) or text[end] in _NUMBER_CHARACTERS)
                and _matched_to(_NUMBER_GOES_ON, text, end) == len(text)
                and source.more(keep_from)
            ):
                continue
            source.pos = source.base + end
            return value

    def _value(self, keep_from: int, path: JsonPath, *, depth: int) -> Any:
        source = self.source
        start = source.pos
        suspects = SUSPECTS[0]
        value = self._decode(keep_from, start, depth=depth)
        begin, end = start - source.base, source.pos - source.base
        strings = has_unstorable_escape(source.text, begin, end)
        # Only a refused number, a repeated key, an unstorable string or deep nesting fails the
        # walk: most values have none, and a value of few brackets cannot nest deep.
        deep = source.text.count("[", begin, end) + source.text.count("{", begin, end) + depth >= MAX_DEPTH
        if strings or deep or SUSPECTS[0] != suspects or not isinstance(value, dict | list):
            try:
                check_value(value, path, strings=strings)
            except JsonValueError as exc:
                self._refuse(exc)
        return value

    def _wording(self, state: str, state_at: int) -> None:
        """Raise the decoder's own words for bad syntax: it reads ``state``, then our text from
        ``state_at`` (the rest of the file, which is read whole to be sure)."""
        source = self.source
        source.read_all()
        synthetic = state + source.text[state_at - source.base :]
        try:
            DECODER.raw_decode(synthetic, 0)
        except json.JSONDecodeError as exc:
            raise source.syntax_error(exc.msg, state_at + exc.pos - len(state)) from None
        raise source.syntax_error("Expecting value", state_at)
