"""Reading the TSAR-2022 TSV files (UTF-8, one instance a line, fields separated by tabs):

- gold: ``sentence<TAB>complex word<TAB>annotation1<TAB>annotation2...``, every annotator's
  suggestion, repeated when several gave it (a file of ``sentence<TAB>complex word`` lines, the
  shared task's ``none`` file, reads as a gold without suggestions);
- predictions: ``sentence<TAB>complex word<TAB>pred1<TAB>pred2...``, a system's substitutes, best first.

Pure: a parser takes a stream of lines, bytes (decoded as UTF-8) or text, and returns plain values
(``schemes.tsar.metrics``). Every field is trimmed; empty fields at the end of a line are dropped
(a line without predictions is kept: it scores as a miss); a line of blank space is skipped. Bad
input is an ``ImportFailed`` naming the file, the line and the field; nothing is returned then.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from annotation.importers.errors import ImportFailed, shown
from schemes.tsar.metrics import GoldInstance, Key, Prediction, instance_key

Lines = Iterable[str | bytes]


def numbered_text(lines: Lines, *, file: str) -> Iterator[tuple[int, str]]:
    """Each line with its 1-based number, decoded, without its line ending or the byte-order mark."""
    for number, raw in enumerate(lines, start=1):
        if isinstance(raw, bytes):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ImportFailed(
                    f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at position {exc.start + 1} cannot be decoded "
                    "(save the file as UTF-8)",
                    file=file,
                    line=number,
                ) from exc
        else:
            text = raw
        if number == 1:
            text = text.removeprefix("\ufeff")
        yield number, text.rstrip("\r\n")


def _instance_fields(lines: Lines, *, file: str, extra: str) -> Iterator[tuple[int, list[str]]]:
    """The trimmed fields of each line that is not blank: a sentence and a complex word, both
    present, then the rest (``extra`` names them in messages)."""
    for number, text in numbered_text(lines, file=file):
        if not text.strip():
            continue
        fields = [field.strip() for field in text.split("\t")]
        while len(fields) > 2 and not fields[-1]:
            fields.pop()
        if len(fields) < 2:
            raise ImportFailed(
                f"a line is sentence<TAB>complex word<TAB>{extra}...; this one has no tab",
                file=file,
                line=number,
                field="complex word",
            )
        for name, value in zip(("sentence", "complex word"), fields, strict=False):
            if not value:
                raise ImportFailed(f"the {name} is empty", file=file, line=number, field=name)
        yield number, fields


def _once(seen: dict[Key, int], key: Key, *, number: int, file: str) -> None:
    if key in seen:
        raise ImportFailed(
            f"the sentence and complex word {shown(key[1])} of line {seen[key]} again: an instance is listed once",
            file=file,
            line=number,
            field="complex word",
        )
    seen[key] = number


def read_gold(lines: Lines, *, file: str) -> list[GoldInstance]:
    """The instances of a gold file in file order, each annotator's suggestion kept (empty fields
    between suggestions are no suggestion). An instance listed twice is an error."""
    instances: list[GoldInstance] = []
    seen: dict[Key, int] = {}
    for number, fields in _instance_fields(lines, file=file, extra="annotation1<TAB>annotation2"):
        sentence, word, *annotations = fields
        _once(seen, instance_key(sentence, word), number=number, file=file)
        instances.append(
            GoldInstance(sentence=sentence, complex_word=word, annotations=tuple(item for item in annotations if item))
        )
    return instances


def read_predictions(lines: Lines, *, file: str) -> list[Prediction]:
    """The lines of a predictions file in file order, each with its number. An empty field between
    predictions holds its rank (and matches nothing), as in the shared task's scorer; an instance
    listed twice, or a file without any line, is an error."""
    predictions: list[Prediction] = []
    seen: dict[Key, int] = {}
    for number, fields in _instance_fields(lines, file=file, extra="pred1<TAB>pred2"):
        sentence, word, *candidates = fields
        _once(seen, instance_key(sentence, word), number=number, file=file)
        predictions.append(Prediction(sentence=sentence, complex_word=word, candidates=tuple(candidates), line=number))
    if not predictions:
        raise ImportFailed("the file holds no predictions (sentence<TAB>complex word<TAB>pred1...)", file=file)
    return predictions
