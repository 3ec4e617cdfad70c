"""Our JSONL format: one target per line (docs/formats.md). Parsed line by line: memory stays flat."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

from annotation.importers.formats import ImportFormat, ParsedFile, register_import_format
from annotation.importers.json_values import JsonValueError, field_name, load_json
from annotation.importers.reading import numbered_lines
from annotation.importers.records import (
    CandidateRecord,
    TargetRecord,
    Where,
    candidate_text,
    cefr_level,
    check_offset,
    own_label,
    own_pos,
    source_names,
)


def parse_jsonl(stream: io.BufferedIOBase, *, file: str) -> Iterator[TargetRecord]:
    for number, line in numbered_lines(stream, file=file):
        if not line.strip():
            continue
        where = Where(file, number)
        try:
            data = load_json(line)
        except json.JSONDecodeError as exc:
            raise where.error(f"malformed JSON: {exc.msg} at column {exc.colno}") from exc
        except JsonValueError as exc:
            raise where.error(exc.message, field_name(exc.path) or None) from exc
        if not isinstance(data, dict):
            raise where.error(f"malformed JSON: expected an object per line, found {type(data).__name__}")
        yield target_from_object(data, where)


def _required_text(data: dict[str, Any], key: str, where: Where) -> str:
    if key not in data or data[key] is None:
        raise where.error("missing field", key)
    value = data[key]
    if not isinstance(value, str) or not value.strip():
        raise where.error("must be a non-empty string", key)
    return value


def target_from_object(data: dict[str, Any], where: Where) -> TargetRecord:
    context = _required_text(data, "context", where)
    where.check_length(context, "context", "IMPORT_MAX_TEXT_LENGTH")
    word = _required_text(data, "target", where)
    where.check_length(word, "target", "IMPORT_MAX_WORD_LENGTH")
    if "offset" not in data:
        raise where.error("missing field", "offset")
    offset = check_offset(context, word, data["offset"], where)
    if "pos" not in data:
        raise where.error("missing field", "pos")
    pos = own_pos(data["pos"], where)
    lemma = data.get("lemma")
    if lemma is None:
        lemma = ""
    if not isinstance(lemma, str):
        raise where.error("must be a string", "lemma")
    where.check_length(lemma, "lemma", "IMPORT_MAX_WORD_LENGTH")
    if "candidates" not in data:
        raise where.error("missing field", "candidates")
    raw_candidates = data["candidates"]
    if not isinstance(raw_candidates, list):
        raise where.error("must be a list", "candidates")
    return TargetRecord(
        where=where,
        context_text=context,
        word=word,
        offset=offset,
        pos=pos,
        lemma=lemma.strip(),
        cefr=cefr_level(data.get("cefr"), where, "cefr"),
        candidates=[_candidate(raw, where, f"candidates[{index}]") for index, raw in enumerate(raw_candidates)],
    )


def _candidate(raw: object, where: Where, path: str) -> CandidateRecord:
    # A bare string is shorthand for a candidate with no sources and no labels.
    data: dict[str, Any] = {"text": raw} if isinstance(raw, str) else raw  # type: ignore[assignment]
    if not isinstance(data, dict):
        raise where.error("a candidate must be a string or an object", path)
    if "text" not in data:
        raise where.error("missing field", f"{path}.text")
    text = data["text"]
    if not isinstance(text, str):
        raise where.error("must be a string", f"{path}.text")
    text = text.strip()
    normalized = candidate_text(text, where, f"{path}.text")
    raw_labels = data.get("labels")
    if raw_labels is None:
        raw_labels = []
    if not isinstance(raw_labels, list):
        raise where.error("must be a list", f"{path}.labels")
    return CandidateRecord(
        text=text,
        normalized=normalized,
        sources=source_names(data.get("sources"), where, f"{path}.sources"),
        labels=[own_label(value, where, f"{path}.labels[{index}]") for index, value in enumerate(raw_labels)],
        where=where,
        cefr=cefr_level(data.get("cefr"), where, f"{path}.cefr"),
    )


register_import_format(
    ImportFormat(
        "jsonl", "JSONL (one target per line)", lambda stream, file: ParsedFile(parse_jsonl(stream, file=file))
    )
)
