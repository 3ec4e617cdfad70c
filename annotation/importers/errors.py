"""The one exception every import path raises for bad input."""

from __future__ import annotations

# Values echoed in messages are cut to this many characters: a message quotes, it does not copy.
SHOWN_LENGTH = 60


def shown(value: object) -> str:
    """A value as a message quotes it: its repr (so NUL and lone surrogates appear escaped), cut short."""
    text = repr(value)
    return text if len(text) <= SHOWN_LENGTH else text[: SHOWN_LENGTH - 1] + "…"


def printable(text: str) -> str:
    """Text a terminal, a page, a JSON response and the database all accept: control characters,
    NUL and lone surrogates (which file names and ids can carry) are written as escapes."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


class ImportFailed(Exception):
    """Bad input in an imported file, with where it is: file, line (or item id) and field.

    ``str(error)`` reads ``"demo.jsonl, line 7, field 'offset': offset 12 does not point at ..."``
    so a command, an API response and a form can show it as is.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str,
        line: int | None = None,
        item: str | None = None,
        field: str | None = None,
    ) -> None:
        self.message = printable(message)
        self.file = printable(file)
        self.line = line
        self.item = printable(item) if item is not None else None
        self.field = printable(field) if field is not None else None
        super().__init__(self.describe())

    def describe(self) -> str:
        where = [self.file or "input"]
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.item:
            where.append(self.item)
        if self.field:
            where.append(f"field {self.field!r}")
        return f"{', '.join(where)}: {self.message}"

    def as_dict(self) -> dict[str, str | int | None]:
        return {
            "detail": self.describe(),
            "file": self.file,
            "line": self.line,
            "item": self.item,
            "field": self.field,
        }
