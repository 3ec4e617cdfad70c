"""Gold items of a qualification test: what one is, reading them from a hand-written JSONL or CSV
file, and picking them from a finished benchmark's clear scores.

A gold item is (context, target, offset, candidate, expected answer). A file names them per line:

    {"context": "The bright student solved it.", "target": "bright", "candidate": "clever", "expected": "accept"}

where ``expected`` is one of the answers the benchmark's scheme lets a gold item expect, in its own
words (ProLex: "1" or "-1") or as the stored label (accept, reject): ``QualificationGold``.

or as CSV with the header ``context,target,offset,candidate,expected`` (``offset`` may be left out
or empty: the target's first occurrence in the context). Bad input raises ``ImportFailed`` naming
the file, the line and the field, as imports do (docs/qualification.md).
"""

from __future__ import annotations

import csv
import io
import json
import random
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.models import Count, Q

from annotation.importers.errors import ImportFailed, shown
from annotation.importers.reading import READ_ERRORS, open_binary
from annotation.models import Benchmark, Candidate, CandidateStage, LabelValue, normalize_candidate
from annotation.selectors import valid_labels
from hits.qualification.models import GoldAnswer
from schemes.base import QualificationGold

# A test is read by people in one sitting: a few thousand items is already far more than any needs.
MAX_GOLD_ITEMS = 5000
FIELDS = ("context", "target", "offset", "candidate", "expected")
REQUIRED = ("context", "target", "candidate", "expected")


@dataclass(frozen=True)
class GoldItem:
    context: str
    word: str
    offset: int
    candidate: str
    expected: str
    source_candidate_id: int | None = None
    source_score: float | None = None


def expectation_error(gold: QualificationGold, written: object) -> str:
    return f"expected must be {gold.describe()}, not {shown(written)}"


def gold_item_check(item: GoldItem, gold: QualificationGold) -> dict[str, str]:
    """What is wrong with an item whose expectation is a stored label, by field (empty when it is sound)."""
    errors: dict[str, str] = {}
    if not item.context.strip():
        errors["context"] = "the context is empty"
    if not item.word.strip():
        errors["target"] = "the target is empty"
    elif item.context[item.offset : item.offset + len(item.word)] != item.word:
        errors["offset"] = f"offset {item.offset} does not point at {shown(item.word)} in the context"
    if not normalize_candidate(item.candidate):
        errors["candidate"] = "the candidate is empty"
    elif len(item.candidate) > 500:
        errors["candidate"] = "a candidate has at most 500 characters"
    if item.expected not in gold.labels:
        errors["expected"] = expectation_error(gold, item.expected)
    return errors


def _record_item(record: Mapping[str, Any], *, file: str, line: int, gold: QualificationGold) -> GoldItem:
    unknown = sorted(set(record) - set(FIELDS))
    if unknown:
        raise ImportFailed(f"unknown field; the fields are {', '.join(FIELDS)}", file=file, line=line, field=unknown[0])
    for name in REQUIRED:
        value = record.get(name)
        # An expectation may be a JSON number where the scheme's words are numbers (ProLex's -1).
        if name == "expected" and isinstance(value, int) and not isinstance(value, bool):
            continue
        if not isinstance(value, str) or not value.strip():
            raise ImportFailed("missing or not a text", file=file, line=line, field=name)
    context, word = str(record["context"]), str(record["target"])
    raw_offset = record.get("offset")
    if raw_offset is None or raw_offset == "":
        offset = context.find(word)
        if offset < 0:
            raise ImportFailed(f"{shown(word)} does not occur in the context", file=file, line=line, field="target")
    elif isinstance(raw_offset, int) and not isinstance(raw_offset, bool) and raw_offset >= 0:
        offset = raw_offset
    elif isinstance(raw_offset, str) and raw_offset.strip().isdigit():
        offset = int(raw_offset.strip())
    else:
        raise ImportFailed(f"not a whole number >= 0: {shown(raw_offset)}", file=file, line=line, field="offset")
    # The scheme's word for the expectation (ProLex's "1") or the stored label, kept as the label.
    expected = gold.expects_label(str(record["expected"]))
    if expected is None:
        raise ImportFailed(expectation_error(gold, record["expected"]), file=file, line=line, field="expected")
    item = GoldItem(
        context=context,
        word=word,
        offset=offset,
        candidate=str(record["candidate"]).strip(),
        expected=expected,
    )
    errors = gold_item_check(item, gold)
    if errors:
        field, message = next(iter(errors.items()))
        raise ImportFailed(message, file=file, line=line, field=field)
    return item


def _jsonl_records(text: str, *, file: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as error:
            raise ImportFailed(f"not valid JSON ({error.msg})", file=file, line=number) from None
        if not isinstance(record, dict):
            raise ImportFailed("each line must be a JSON object", file=file, line=number)
        yield number, record


def _csv_records(text: str, *, file: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = reader.fieldnames or []
    missing = [name for name in REQUIRED if name not in header]
    if missing:
        raise ImportFailed(f"the header lacks {', '.join(missing)}", file=file, line=1, field=missing[0])
    for record in reader:
        if None in record:
            raise ImportFailed("more cells than the header names", file=file, line=reader.line_num)
        yield reader.line_num, {key: value for key, value in record.items() if key is not None}


def gold_items_read(data: bytes, *, file: str, gold: QualificationGold) -> list[GoldItem]:
    """The gold items of a JSONL or CSV file (told by its name, ``.csv`` or else JSONL) for a test that
    asks what ``gold`` says (the scheme's, ``hits.qualification.gold_scheme``); each item's expectation
    is read as the stored label it names."""
    limit: int = settings.QUALIFICATION_MAX_GOLD_FILE_BYTES
    if len(data) > limit:
        raise ImportFailed(
            f"the file is larger than {limit:,} bytes (QUALIFICATION_MAX_GOLD_FILE_BYTES={limit})", file=file
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ImportFailed(f"not UTF-8 (byte {error.start})", file=file) from None
    if "\x00" in text:
        raise ImportFailed("the file contains a NUL character", file=file)
    records = _csv_records(text, file=file) if file.lower().endswith(".csv") else _jsonl_records(text, file=file)
    items: list[GoldItem] = []
    for line, record in records:
        if len(items) >= MAX_GOLD_ITEMS:
            raise ImportFailed(f"a test takes at most {MAX_GOLD_ITEMS} gold items", file=file, line=line)
        items.append(_record_item(record, file=file, line=line, gold=gold))
    if not items:
        raise ImportFailed("no gold items in the file", file=file)
    return items


def gold_items_from_path(path: str | Path, *, gold: QualificationGold) -> list[GoldItem]:
    """The gold items of a file, gzipped or not, read through the reader every upload goes through:
    no more than ``QUALIFICATION_MAX_GOLD_FILE_BYTES`` of it is ever held."""
    path = Path(path)
    limit: int = settings.QUALIFICATION_MAX_GOLD_FILE_BYTES
    try:
        with open_binary(
            path, file=path.name, max_bytes=limit, max_bytes_setting="QUALIFICATION_MAX_GOLD_FILE_BYTES"
        ) as stream:
            data = stream.read()
    except READ_ERRORS as error:
        raise ImportFailed(f"cannot read it: {error}", file=path.name) from None
    return gold_items_read(data, file=path.name, gold=gold)


@dataclass(frozen=True)
class ClearScores:
    """Which scores of a finished benchmark are clear enough to be gold: at least ``min_labels`` valid
    labels, and a score (accepts / valid labels, docs/design.md §7) of at least ``accept_min`` (gold: accept)
    or at most ``reject_max`` (gold: reject)."""

    min_labels: int = 10
    accept_min: float = 0.9
    reject_max: float = 0.0

    def __post_init__(self) -> None:
        if self.min_labels < 1:
            raise ValueError("min_labels must be at least 1")
        if not 0 <= self.reject_max < self.accept_min <= 1:
            raise ValueError("need 0 <= reject_max < accept_min <= 1")


def gold_items_from_benchmark(
    *, benchmark: Benchmark, clear: ClearScores = ClearScores(), limit: int | None = None, seed: int = 0
) -> list[GoldItem]:
    """Gold items picked from ``benchmark``'s candidates whose scores are clear (``ClearScores``).

    The scores are counted here from the valid labels (``annotation.selectors.valid_labels``), as the
    benchmark's scores are, so that collection does not depend on reporting. Candidates a researcher
    excluded and candidates equal to their target are left out. With ``limit``, a seeded sample of
    that many, half accept and half reject as far as there are.
    """
    counts = (
        valid_labels()
        .filter(candidate__target__benchmark=benchmark)
        .exclude(candidate__stage=CandidateStage.EXCLUDED)
        .values("candidate_id")
        .annotate(total=Count("id"), accepts=Count("id", filter=Q(value=LabelValue.ACCEPT)))
        .filter(total__gte=clear.min_labels)
        .order_by("candidate_id")
    )
    chosen: dict[int, tuple[str, float]] = {}
    for row in counts:
        score = row["accepts"] / row["total"]
        if score >= clear.accept_min:
            chosen[row["candidate_id"]] = (GoldAnswer.ACCEPT, score)
        elif score <= clear.reject_max:
            chosen[row["candidate_id"]] = (GoldAnswer.REJECT, score)
    candidates = Candidate.objects.filter(pk__in=list(chosen)).select_related("target__context").order_by("pk")
    items = [
        GoldItem(
            context=candidate.target.context.text,
            word=candidate.target.word,
            offset=candidate.target.offset,
            candidate=candidate.text,
            expected=chosen[candidate.pk][0],
            source_candidate_id=candidate.pk,
            source_score=chosen[candidate.pk][1],
        )
        for candidate in candidates
        if candidate.normalized != normalize_candidate(candidate.target.word)
    ]
    return items if limit is None else balanced_sample(items, limit, random.Random(seed))


def balanced_sample(items: Iterable[GoldItem], count: int, rng: random.Random) -> list[GoldItem]:
    """``count`` items, half expected accept and half reject as far as each side has enough."""
    accepts = [item for item in items if item.expected == GoldAnswer.ACCEPT]
    rejects = [item for item in items if item.expected != GoldAnswer.ACCEPT]
    indices = balanced_indices(len(accepts), len(rejects), count, rng)
    return [accepts[i] if side == 0 else rejects[i] for side, i in indices]


def balanced_indices(accepts: int, rejects: int, count: int, rng: random.Random) -> list[tuple[int, int]]:
    """(side, index) pairs of a seeded sample of ``count`` from two sides of the given sizes, as even
    as the sizes allow (side 0: accepts, 1: rejects), in a shuffled order."""
    count = min(count, accepts + rejects)
    from_accepts = min(accepts, max(count - rejects, (count + 1) // 2))
    from_rejects = count - from_accepts
    picked = [(0, i) for i in rng.sample(range(accepts), from_accepts)]
    picked += [(1, i) for i in rng.sample(range(rejects), from_rejects)]
    rng.shuffle(picked)
    return picked
