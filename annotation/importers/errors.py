"""The one exception every import path raises for bad input."""

from __future__ import annotations


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
        self.message = message
        self.file = file
        self.line = line
        self.item = item
        self.field = field
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
