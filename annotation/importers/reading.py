"""Opening an input: a path or a binary file, gzipped or not, and telling its format from its bytes."""

from __future__ import annotations

import gzip
import io
import os
import re
import zlib
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO, Literal

from annotation.importers.errors import ImportFailed
from annotation.importers.records import Where

Format = Literal["jsonl", "csv", "swords"]
FORMATS: tuple[Format, ...] = ("jsonl", "csv", "swords")
Source = str | os.PathLike[str] | IO[bytes]

GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"
# SWORDS files are one JSON object whose first key is "contexts" (swords' as_dict order, and
# also first under sort_keys); our JSONL lines are objects keyed "context", "target", ...
_SWORDS_START = re.compile(rb'^\{\s*"contexts"\s*:')


def source_name(path_or_file: Source) -> str:
    """The file name to show in messages and to use as the labels' default origin."""
    if isinstance(path_or_file, str | os.PathLike):
        return Path(path_or_file).name
    name = getattr(path_or_file, "name", None)
    return Path(name).name if isinstance(name, str) and name else "upload"


@contextmanager
def open_binary(path_or_file: Source, *, file: str) -> Iterator[io.BufferedIOBase]:
    """A peekable binary stream of the decompressed content; the caller's file object is not closed."""
    with ExitStack() as stack:
        raw: IO[bytes]
        if isinstance(path_or_file, str | os.PathLike):
            try:
                raw = stack.enter_context(open(path_or_file, "rb"))
            except OSError as exc:
                raise ImportFailed(f"cannot open the file: {exc.strerror or exc}", file=file) from exc
        else:
            if isinstance(path_or_file, io.TextIOBase):
                raise TypeError("benchmark_import reads bytes: open the file in binary mode")
            raw = path_or_file
        buffered: io.BufferedIOBase
        if hasattr(raw, "peek"):
            buffered = raw  # type: ignore[assignment]
        else:
            buffered = io.BufferedReader(raw)  # type: ignore[arg-type,type-var]
            # Detach on the way out, or the wrapper would close the caller's file when collected.
            stack.callback(buffered.detach)
        if buffered.peek(2)[:2] == GZIP_MAGIC:  # type: ignore[attr-defined]
            buffered = stack.enter_context(gzip.GzipFile(fileobj=buffered, mode="rb"))
        yield buffered


def sniff_format(stream: io.BufferedIOBase, *, file: str) -> Format:
    """Tell SWORDS JSON, our JSONL and our CSV apart by their first bytes."""
    try:
        head = stream.peek(4096)[:4096]  # type: ignore[attr-defined]
    except (OSError, EOFError, zlib.error) as exc:
        raise ImportFailed(f"cannot read the file: {exc}", file=file) from exc
    head = head.removeprefix(UTF8_BOM).lstrip()
    if not head:
        raise ImportFailed("the file is empty", file=file)
    if _SWORDS_START.match(head):
        return "swords"
    if head.startswith(b"{"):
        return "jsonl"
    return "csv"


def decode_line(raw: bytes, where: Where) -> str:
    """UTF-8 text of one line; the byte that fails names the problem precisely."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise where.error(
            f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at position {exc.start + 1} cannot be decoded "
            "(save the file as UTF-8)"
        ) from exc


def numbered_lines(stream: io.BufferedIOBase, *, file: str) -> Iterator[tuple[int, str]]:
    """Decoded lines with their 1-based numbers, line endings kept, the UTF-8 byte-order mark dropped."""
    number = 0
    try:
        for number, raw in enumerate(stream, start=1):
            text = decode_line(raw, Where(file, number))
            if number == 1:
                text = text.removeprefix("\ufeff")
            yield number, text
    except (OSError, EOFError, zlib.error) as exc:
        # A damaged gzip stream surfaces here, while reading.
        raise ImportFailed(f"cannot read the file after line {number}: {exc}", file=file) from exc
