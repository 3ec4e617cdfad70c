"""Opening an input: a path or a binary file, gzipped or not, and telling its format from its bytes.

Every upload of the platform goes through :func:`open_binary` (imports, split lists, system
result files, gold files), so reading is bounded in bytes and in memory: an upload may be at most
``IMPORT_MAX_UPLOAD_BYTES`` (checked by the pages and the API before anything is read), a line at
most ``IMPORT_MAX_LINE_BYTES``, a gzipped input may expand at most ``IMPORT_MAX_GZIP_RATIO`` times
the compressed bytes read so far, and the whole decompressed content may be at most
``IMPORT_MAX_DECOMPRESSED_BYTES`` (a caller may set a smaller bound of its own, such as
``EVALUATION_MAX_RESULT_BYTES``). All but the first are checked while reading, so a decompression
bomb is stopped after a few megabytes, not after gigabytes, and the error names the setting.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import zlib
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.base import File

from annotation.importers.errors import ImportFailed, printable
from annotation.importers.formats import import_formats

Source = str | os.PathLike[str] | IO[bytes]

GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"
# What a damaged or truncated gzip stream raises while it is read.
READ_ERRORS = (OSError, EOFError, zlib.error)
MiB = 1024 * 1024
# A JSONL line holds one target with its candidates and labels (a few kilobytes in SWORDS).
# The first 64 KiB of a gzipped input may expand freely: the ratio means little on tiny files.
GZIP_FREE_BYTES = 64 * 1024
# The format is told from the first bytes of the input.
SNIFF_BYTES = 4096


def source_name(path_or_file: Source) -> str:
    """The file name to show in messages and to use as the labels' default origin."""
    if isinstance(path_or_file, str | os.PathLike):
        return printable(Path(path_or_file).name)
    name = getattr(path_or_file, "name", None)
    return printable(Path(name).name) if isinstance(name, str) and name else "upload"


def validate_upload_size(upload: File[Any]) -> None:
    """Refuse an upload larger than ``IMPORT_MAX_UPLOAD_BYTES`` (the upload page and the API)."""
    limit: int = settings.IMPORT_MAX_UPLOAD_BYTES
    if upload.size is not None and upload.size > limit:
        raise ValidationError(
            f"The file is {upload.size / MiB:.1f} MiB; uploads are limited to {limit / MiB:.1f} MiB "
            f"(IMPORT_MAX_UPLOAD_BYTES={limit}). Compress it with gzip, or import it with the import_benchmark command."
        )


class _Counted:
    """The compressed side of a gzip input, counting the bytes the decompressor reads."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.count = 0

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self.count += len(data)
        return data


def _size(count: int) -> str:
    return f"{count // MiB} MiB" if count % MiB == 0 else f"{count:,} bytes"


class _BoundedContent(io.RawIOBase):
    """The content as read (decompressed, if it was gzipped), refusing more than ``limit`` bytes
    in all: the check runs on every read, so reading stops as soon as it fails."""

    def __init__(self, raw: Any, *, file: str, limit: int, setting: str) -> None:
        self._raw = raw
        self._file = file
        self._limit = limit
        self._setting = setting
        self._count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer)
        # One byte past the limit is enough to know it is exceeded.
        room = self._limit + 1 - self._count
        count = self._raw.readinto(view[: max(1, min(len(view), room))])
        self._count += count or 0
        if self._count > self._limit:
            raise ImportFailed(
                f"refused: the content is larger than {_size(self._limit)} ({self._setting}={self._limit})",
                file=self._file,
            )
        return count  # type: ignore[no-any-return]


class _BoundedGzip(io.RawIOBase):
    """The decompressed side, refusing to expand past ``IMPORT_MAX_GZIP_RATIO`` times the compressed
    bytes read so far: the check runs on every read, so reading stops as soon as it fails."""

    def __init__(self, compressed: _Counted, decompressed: gzip.GzipFile, *, file: str) -> None:
        self._compressed = compressed
        self._decompressed = decompressed
        self._file = file
        self._ratio: int = settings.IMPORT_MAX_GZIP_RATIO
        self._expanded = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        count = self._decompressed.readinto(buffer)
        self._expanded += count
        if self._expanded > self._ratio * self._compressed.count + GZIP_FREE_BYTES:
            raise ImportFailed(
                f"refused: the first {self._compressed.count:,} bytes of gzip expanded to {self._expanded:,}, "
                f"over {self._ratio} times as much (IMPORT_MAX_GZIP_RATIO={self._ratio})",
                file=self._file,
            )
        return count


@contextmanager
def open_binary(
    path_or_file: Source, *, file: str, max_bytes: int | None = None, max_bytes_setting: str = ""
) -> Iterator[io.BufferedIOBase]:
    """A peekable binary stream of the decompressed content; the caller's file object is not closed.

    The content may be at most ``IMPORT_MAX_DECOMPRESSED_BYTES``, or ``max_bytes`` when given
    (``max_bytes_setting`` names the setting it comes from, for the message)."""
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
            compressed = _Counted(buffered)  # type: ignore[arg-type]
            decompressed = stack.enter_context(gzip.GzipFile(fileobj=compressed, mode="rb"))  # type: ignore[call-overload]
            buffered = io.BufferedReader(_BoundedGzip(compressed, decompressed, file=file), buffer_size=64 * 1024)
        limit: int = settings.IMPORT_MAX_DECOMPRESSED_BYTES if max_bytes is None else max_bytes
        setting = "IMPORT_MAX_DECOMPRESSED_BYTES" if max_bytes is None else max_bytes_setting
        content = _BoundedContent(buffered, file=file, limit=limit, setting=setting)
        buffered = io.BufferedReader(content, buffer_size=64 * 1024)
        # Detach on the way out: closing the wrapper would close the caller's file.
        stack.callback(buffered.detach)
        yield buffered


def sniff_format(stream: io.BufferedIOBase, *, file: str) -> str:
    """The name of the format the first bytes tell (``format="auto"``): the first registered format
    whose ``sniff`` claims them (``ImportFormat.sniff``), else our JSONL for a JSON object and our
    CSV for anything else."""
    try:
        start = stream.peek(SNIFF_BYTES)[:SNIFF_BYTES]  # type: ignore[attr-defined]
    except READ_ERRORS as exc:
        raise ImportFailed(f"cannot read the file: {exc}", file=file) from exc
    head = start.removeprefix(UTF8_BOM).lstrip()
    if not head:
        # A peek returns less than asked only at the end of the input.
        if len(start) < SNIFF_BYTES:
            raise ImportFailed("the file is empty", file=file)
        raise ImportFailed(f"the file starts with more than {SNIFF_BYTES} bytes of blank space", file=file, line=1)
    claimed = next((found.name for found in import_formats() if found.sniff is not None and found.sniff(head)), None)
    if claimed is not None:
        return claimed
    return FALLBACK_JSON if head.startswith(b"{") else FALLBACK_OTHER


# The formats ``auto`` takes when no registered format claims the first bytes.
FALLBACK_JSON, FALLBACK_OTHER = "jsonl", "csv"


def auto_format_help() -> str:
    """What ``format="auto"`` does, from the registry: the formats it tells apart, and the others,
    which are used only when named."""
    formats = import_formats()
    told = [found.name for found in formats if found.sniff is not None or found.name in (FALLBACK_JSON, FALLBACK_OTHER)]
    named = [found.name for found in formats if found.name not in told]
    text = f"auto tells {_listed(told)} apart"
    return f"{text}; the others ({', '.join(named)}) are used when named" if named else text


def _listed(names: list[str]) -> str:
    return " and ".join(names) if len(names) < 3 else f"{', '.join(names[:-1])} and {names[-1]}"


_KEY = re.compile(r'\s*("(?:[^"\\]|\\.)*")\s*:\s*')
_NEXT = re.compile(r"\s*,")


def first_keys(head: str) -> Iterator[str]:
    """The keys of the JSON object that ``head`` starts with, as far as ``head`` holds them: a file
    whose first value is as large as the file shows only the keys before it whole."""
    decoder = json.JSONDecoder()
    index = 1
    while key := _KEY.match(head, index):
        yield key.group(1)[1:-1]
        try:
            _, index = decoder.raw_decode(head, key.end())
        except (ValueError, RecursionError):  # the value runs past the head, or is malformed
            return
        separator = _NEXT.match(head, index)
        if separator is None:
            return
        index = separator.end()


def decode_text(raw: bytes, *, file: str, line: int = 1) -> str:
    """UTF-8 text of one line or of a whole file starting at ``line``; the byte that fails is named
    by its line and position."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = exc.start
        position = bad - raw.rfind(b"\n", 0, bad)
        raise ImportFailed(
            f"not UTF-8 text: byte 0x{raw[bad]:02x} at position {position} cannot be decoded (save the file as UTF-8)",
            file=file,
            line=line + raw.count(b"\n", 0, bad),
        ) from exc


def numbered_lines(stream: io.BufferedIOBase, *, file: str) -> Iterator[tuple[int, str]]:
    """Decoded lines with their 1-based numbers, line endings kept, the UTF-8 byte-order mark dropped."""
    number = 0
    limit: int = settings.IMPORT_MAX_LINE_BYTES
    try:
        while raw := stream.readline(limit + 1):
            number += 1
            if len(raw) > limit:
                raise ImportFailed(
                    f"the line is longer than {_size(limit)} (IMPORT_MAX_LINE_BYTES={limit})", file=file, line=number
                )
            text = decode_text(raw, file=file, line=number)
            if number == 1:
                text = text.removeprefix("\ufeff")
            yield number, text
    except READ_ERRORS as exc:
        # A damaged gzip stream surfaces here, while reading.
        raise ImportFailed(f"cannot read the file after line {number}: {exc}", file=file) from exc
