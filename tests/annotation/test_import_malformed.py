"""Hundreds of generated malformed files: each is refused with a message naming the file, the line
(or SWORDS id) and the field, the same message from the command, the upload page and the API,
with nothing written and never a crash or a 500."""

from __future__ import annotations

import copy
import gzip
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client, TestCase
from django.urls import reverse
from django.utils.html import escape

from annotation.importers import json_stream
from annotation.models import Benchmark
from annotation.services import ImportFailed, benchmark_import
from tests.annotation.import_helpers import FIXTURES, RIVER, coat_record, record, row_counts
from tests.base import make_user

pytestmark = pytest.mark.django_db


@dataclass(frozen=True)
class Malformed:
    """One bad file and where its error must point. ``field`` is a prefix: a value nested inside the
    field is named by its full path (``candidates[0].text`` for a bad ``candidates[0]``)."""

    kind: str
    name: str
    content: bytes
    line: int | None = None
    item: str | None = None
    field: str | None = None
    says: str = ""


# JSON text of each bad value, and what the message says whatever the field (else "").
BAD_VALUES: dict[str, tuple[str, str]] = {
    "nul": ('"a\\u0000b"', "NUL character"),
    "surrogate": ('"a\\ud800b"', "lone surrogate"),
    "nan": ("NaN", "is not a number"),
    "infinity": ("-Infinity", "is not a number"),
    "overflow": ("1e999", "is too large"),
    "huge-int": ("9" * 5000, "digits is too long"),
    "nested": ("[" * 150 + "]" * 150, "nested more than 100 levels deep"),
    "deep": ("[" * 1000 + "]" * 1000, "nested more than 100 levels deep"),
    "empty": ('""', ""),
    "blank": ('"   "', ""),
    "null": ("null", ""),
    "true": ("true", ""),
    "seven": ("7", ""),
    "float": ("14.0", ""),
    "negative": ("-1", ""),
    "far": ("99999999999999999999", ""),
    "list": ("[]", ""),
    "object": ("{}", ""),
    "long": ('"' + "x" * 1000 + '"', ""),
}
# Refused under any key, even one the import ignores.
UNREADABLE = ("nul", "surrogate", "nan", "infinity", "overflow", "huge-int", "nested", "deep")
PLACEHOLDER = "@@bad@@"


def _but(*accepted: str) -> tuple[str, ...]:
    """Every bad value except those a field accepts (or that move the error elsewhere)."""
    return tuple(name for name in BAD_VALUES if name not in accepted)


def _set(data: Any, path: tuple[str | int, ...], value: Any) -> Any:
    changed = copy.deepcopy(data)
    parent = changed
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = value
    return changed


def _without(data: dict[str, Any], key: str) -> dict[str, Any]:
    return {name: value for name, value in data.items() if name != key}


def _field(path: tuple[str | int, ...]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path).removeprefix(".")


def _inject(text: str, value: str) -> tuple[bytes, int]:
    """The text with the placeholder replaced by a bad value's JSON, and the line it is on."""
    line = text[: text.index(f'"{PLACEHOLDER}"')].count("\n") + 1
    return text.replace(f'"{PLACEHOLDER}"', BAD_VALUES[value][0]).encode(), line


def _value_case(
    kind: str,
    name: str,
    value: str,
    content: bytes,
    *,
    on_line: int,
    field: str,
    line: int | None = None,
    item: str | None = None,
) -> Malformed:
    """A bad value on line ``on_line``, named by line (JSONL) or id (SWORDS) and field, unless it is
    nested so deep that the parser stops: then only its line is known."""
    says = BAD_VALUES[value][1]
    if value == "deep":
        return Malformed(kind, name, content, line=on_line, says=says)
    return Malformed(kind, name, content, line=line, item=item, field=field, says=says)


# Each field (as a path into a record) and the values it is tried with.
JSONL_FIELDS: dict[tuple[str | int, ...], tuple[str, ...]] = {
    ("context",): _but("long"),  # a long context is text: the offset then misses the word
    ("target",): _but(),
    ("offset",): _but(),
    ("pos",): _but(),
    ("lemma",): _but("empty", "blank", "null"),
    ("cefr",): _but("empty", "null"),
    ("candidates",): _but("list"),
    ("candidates", 0): _but(),
    ("candidates", 0, "text"): _but(),
    ("candidates", 0, "sources"): _but("null", "list"),
    ("candidates", 0, "labels"): _but("null", "list"),
    ("candidates", 0, "labels", 0): _but("negative"),
    ("candidates", 0, "cefr"): _but("empty", "null"),
    ("note",): UNREADABLE,
}


def jsonl_values() -> list[Malformed]:
    cases = []
    for path, values in JSONL_FIELDS.items():
        line = json.dumps(_set(record(), path, PLACEHOLDER))
        for value in values:
            content, _ = _inject(json.dumps(coat_record()) + "\n" + line + "\n", value)
            name = f"{_field(path)}-{value}.jsonl"
            cases.append(_value_case("jsonl value", name, value, content, on_line=2, line=2, field=_field(path)))
    return cases


SWORDS: dict[str, Any] = json.loads((FIXTURES / "swords_small.json").read_text())
CID, TID, SID = (next(iter(SWORDS[key])) for key in ("contexts", "targets", "substitutes"))
KEYED_BY_ID = ("contexts", "targets", "substitutes", "substitute_labels")
REQUIRED_TOP_LEVEL = ("contexts", "targets", "substitutes", "substitutes_lemmatized")
SWORDS_FIELDS: dict[tuple[str | int, ...], tuple[str, ...]] = {
    ("contexts", CID, "context"): _but("long"),
    ("contexts", CID, "extra"): UNREADABLE,
    ("targets", TID, "context_id"): _but(),
    ("targets", TID, "target"): _but(),
    ("targets", TID, "offset"): _but(),
    ("targets", TID, "pos"): _but(),
    ("targets", TID, "extra"): UNREADABLE,
    ("targets", TID, "extra", "coinco_lemma"): (*UNREADABLE, "long"),
    ("substitutes", SID, "target_id"): _but(),
    ("substitutes", SID, "substitute"): _but(),
    ("substitutes", SID, "extra"): UNREADABLE,
    ("substitutes", SID, "extra", "sources"): _but("null", "list"),
    ("substitute_labels", SID): _but("null", "list"),
    ("substitute_labels", SID, 0): _but(),
    ("substitutes_lemmatized",): _but("true"),
    ("extra",): UNREADABLE,
}


def swords_values() -> list[Malformed]:
    cases = []
    for path, values in SWORDS_FIELDS.items():
        text = json.dumps(_set(SWORDS, path, PLACEHOLDER), indent=2)
        item: str | None = None
        field = _field(path)
        if path[0] in KEYED_BY_ID:  # named by id; labels keep their own field name
            item, field = str(path[1]), "substitute_labels" if path[0] == "substitute_labels" else _field(path[2:])
        for value in values:
            content, line = _inject(text, value)
            name = f"{_field((path[0], *path[2:]))}-{value}.json"
            cases.append(_value_case("swords value", name, value, content, on_line=line, field=field, item=item))
    return cases


CSV_HEADER = "context,target,offset,pos,lemma,candidate,sources,labels"
CSV_ROW = {
    "context": RIVER,
    "target": "calm",
    "offset": "14",
    "pos": "adj",
    "lemma": "calm",
    "candidate": "still",
    "sources": "coinco",
    "labels": "accept",
}
CSV_CELLS = {
    "context": ["a\x00b", "", "   "],
    "target": ["a\x00b", "", "  ", "x" * 201],
    "offset": [
        "a\x00b",
        "",
        " ",
        "15",
        "99999999999999999999",
        "¹¹",
        "١٤",
        "9" * 5000,
        "-14",
        "14.0",
        "NaN",
        "Infinity",
        "0x0e",
        "+14",
        "1e1",
    ],
    "pos": ["a\x00b", "", "det", "14", "n"],
    "lemma": ["a\x00b", "x" * 201, "walk"],
    "candidate": ["a\x00b", "", "  ", "x" * 501, "ß" * 300],
    "sources": ["a\x00b"],
    "labels": ["a\x00b", "yes", "1.0", "accept;maybe", "+1", "NaN", "TRUE"],
}


def _csv(*rows: list[str], header: str = CSV_HEADER) -> bytes:
    out = io.StringIO()
    out.write(header + "\n")
    for row in rows:
        out.write(",".join('"' + cell.replace('"', '""') + '"' for cell in row) + "\n")
    return out.getvalue().encode()


def csv_values() -> list[Malformed]:
    cases = []
    good = list(CSV_ROW.values())
    for column, cells in CSV_CELLS.items():
        for number, cell in enumerate(cells):
            bad = [cell if name == column else value for name, value in CSV_ROW.items()]
            content = _csv(good, bad)
            name = f"{column}-{number}.csv"
            cases.append(
                Malformed("csv value", name, content, line=3, field=column, says="NUL" if "\x00" in cell else "")
            )
    return cases


def csv_structure() -> list[Malformed]:
    good = list(CSV_ROW.values())
    cases = [
        Malformed(
            "csv structure",
            f"twice-{column}.csv",
            _csv([*good, good[index]], header=f"{CSV_HEADER},{column}"),
            line=1,
            field=column,
            says="appears twice",
        )
        for index, column in enumerate(CSV_ROW)
    ]
    for column in ("context", "target", "offset", "pos", "candidate"):
        header = ",".join(name for name in CSV_ROW if name != column)
        row = [value for name, value in CSV_ROW.items() if name != column]
        cases.append(
            Malformed(
                "csv structure",
                f"without-{column}.csv",
                _csv(row, header=header),
                line=1,
                field=column,
                says="missing field",
            )
        )
    cases += [
        Malformed("csv structure", "no-header.csv", b",,,\n", line=1, field="context", says="no header row"),
        Malformed(
            "csv structure",
            "nul-header.csv",
            b"con\x00text,target\n",
            line=1,
            field="column 1",
            says="NUL character",
        ),
        Malformed("csv structure", "short-row.csv", _csv(good, good[:6]), line=3, says="expected 8 fields"),
        Malformed("csv structure", "long-row.csv", _csv(good, [*good, "x"]), line=3, says="expected 8 fields"),
        Malformed(
            "csv structure",
            "open-quote.csv",
            _csv(good) + b'"' + RIVER.encode() + b",calm\n",
            line=3,
            says="malformed CSV",
        ),
        Malformed(
            "csv structure",
            "huge-cell.csv",
            _csv(good, [*good[:5], "x" * 200_000, *good[6:]]),
            line=3,
            says="field larger than field limit",
        ),
    ]
    return cases


def _gzip_members(member: bytes, count: int) -> bytes:
    """A gzip file of ``count`` copies of one compressed member: 1 KB per MiB of zeros, built at once."""
    return gzip.compress(member) * count


MiB = 1024 * 1024
GOOD_JSONL = (json.dumps(coat_record()) + "\n").encode()


def whole_files() -> list[Malformed]:
    swords = json.dumps(SWORDS, indent=2)
    full = gzip.compress(GOOD_JSONL * 200)
    target = SWORDS["targets"][TID]
    repeated_key = swords.replace('"offset": 14,', '"offset": 14, "offset": 15,', 1)
    return [
        Malformed("size", "empty.jsonl", b"", says="the file is empty"),
        Malformed("size", "blank.jsonl", b" \n\t\n", says="the file is empty"),
        Malformed("size", "bom.csv", b"\xef\xbb\xbf\n", says="the file is empty"),
        Malformed("size", "empty.jsonl.gz", gzip.compress(b""), says="the file is empty"),
        Malformed("gzip", "truncated.jsonl.gz", full[: len(full) // 2], says="cannot read the file"),
        Malformed("gzip", "truncated.json.gz", gzip.compress(swords.encode())[:500], says="cannot read the file"),
        Malformed("gzip", "corrupt.jsonl.gz", full[:20] + b"\xff" * 64 + full[84:], says="cannot read the file"),
        Malformed("gzip", "magic-only.jsonl.gz", b"\x1f\x8bnot gzip at all", says="cannot read the file"),
        Malformed("gzip", "twice.jsonl.gz", gzip.compress(gzip.compress(GOOD_JSONL)), line=1, says="not UTF-8"),
        Malformed("size", "nul-bomb.csv.gz", _gzip_members(b"\x00" * MiB, 1024), line=1, says="longer than 1 MiB"),
        Malformed("size", "newline-bomb.jsonl.gz", _gzip_members(b"\n" * MiB, 1024), line=1, says="blank space"),
        # Blank lines and rows are skipped, so only the expansion limit stops these.
        Malformed(
            "size",
            "blank-line-bomb.jsonl.gz",
            gzip.compress(GOOD_JSONL) + _gzip_members((b" " * 99 + b"\n") * 10_000, 1024),
            says="over 200 times as much",
        ),
        Malformed(
            "size",
            "blank-row-bomb.csv.gz",
            gzip.compress(CSV_HEADER.encode() + b"\n") + _gzip_members((b",,,,,,," + b" " * 92 + b"\n") * 10_000, 1024),
            says="over 200 times as much",
        ),
        Malformed(
            "size",
            "long-line.jsonl",
            b'{"context": "' + b"x" * (2 * MiB) + b'"}\n',
            line=1,
            says="longer than 1 MiB",
        ),
        Malformed(
            "encoding",
            "latin1.jsonl",
            GOOD_JSONL + json.dumps(record(context="Café " + RIVER, offset=19), ensure_ascii=False).encode("latin-1"),
            line=2,
            says="not UTF-8 text: byte 0xe9",
        ),
        Malformed("encoding", "utf16-bom.csv", (CSV_HEADER + "\n").encode("utf-16"), line=1, says="not UTF-8 text"),
        Malformed(
            "encoding",
            "utf16.csv",
            (CSV_HEADER + "\n").encode("utf-16-le"),
            line=1,
            field="column 1",
            says="NUL character",
        ),
        Malformed("encoding", "utf16.jsonl", GOOD_JSONL.decode().encode("utf-16-le"), line=1, says="malformed JSON"),
        Malformed(
            "encoding",
            "surrogate-bytes.jsonl",
            GOOD_JSONL + b'{"context": "\xed\xa0\x80"}\n',
            line=2,
            says="not UTF-8 text: byte 0xed",
        ),
        Malformed("encoding", "overlong.jsonl", b'{"context": "\xc0\xaf"}\n', line=1, says="not UTF-8 text"),
        Malformed(
            "encoding",
            "latin1.json",
            swords.replace("\\u201c", "\u201c").encode("cp1252"),
            line=swords[: swords.index("\\u201c")].count("\n") + 1,
            says="not UTF-8 text",
        ),
        Malformed(
            "jsonl structure",
            "raw-nul.jsonl",
            GOOD_JSONL + b'{"context": "a\x00b"}\n',
            line=2,
            says="Invalid control character",
        ),
        Malformed("jsonl structure", "array.jsonl", GOOD_JSONL + b"[1, 2]\n", line=2, says="expected an object"),
        Malformed("jsonl structure", "string.jsonl", GOOD_JSONL + b'"calm"\n', line=2, says="expected an object"),
        Malformed(
            "jsonl structure", "unfinished.jsonl", GOOD_JSONL + b'{"context": "x",\n', line=2, says="malformed JSON"
        ),
        Malformed(
            "jsonl structure",
            "repeated-key.jsonl",
            GOOD_JSONL + json.dumps(record()).replace('"offset": 14,', '"offset": 14, "offset": 15,').encode(),
            line=2,
            field="offset",
            says="appears twice",
        ),
        Malformed(
            "swords structure",
            "repeated-key.json",
            repeated_key.encode(),
            item=TID,
            field="offset",
            says="appears twice",
        ),
        Malformed(
            "swords structure",
            "deep-top.json",
            b'{"contexts": ' + b"[" * 5000 + b"]" * 5000 + b"}",
            line=1,
            says="nested more than 100 levels deep",
        ),
        Malformed(
            "swords structure",
            "raw-nul.json",
            swords.replace("calm", "ca\x00lm", 1).encode(),
            line=swords[: swords.index("calm")].count("\n") + 1,
            says="Invalid control character",
        ),
        *[
            Malformed(
                "swords structure",
                f"repeated-{kind}.json",
                swords.replace(f'"{kind}": {{', f'"{kind}": {{"{key}": {value},', 1).encode(),
                item=key,
                field=kind,
                says="appears twice",
            )
            for kind, key, value in (
                ("contexts", CID, '{"context": "x"}'),
                ("targets", TID, json.dumps(target)),
                ("substitutes", SID, json.dumps(SWORDS["substitutes"][SID])),
                ("substitute_labels", SID, "[]"),
            )
        ],
        *[
            Malformed("swords structure", f"{name}-{key}.json", json.dumps(data).encode(), field=key, says=says)
            for name, key, data, says in [
                *(("without", key, _without(SWORDS, key), "missing field") for key in REQUIRED_TOP_LEVEL),
                *(("list", key, {**SWORDS, key: []}, "must be an object") for key in KEYED_BY_ID),
            ]
        ],
        *[
            Malformed(
                "swords structure",
                f"{kind}-not-object.json",
                json.dumps(_set(SWORDS, (kind, key), [])).encode(),
                item=key,
                says="expected an object",
            )
            for kind, key in (("contexts", CID), ("targets", TID), ("substitutes", SID))
        ],
        Malformed(
            "swords structure",
            "empty-id.json",
            json.dumps(_set(SWORDS, ("contexts", " "), {"context": "x"})).encode(),
            field="contexts",
            says="an empty id",
        ),
        Malformed(
            "swords structure",
            "long-id.json",
            json.dumps(_set(SWORDS, ("contexts", "c:" + "0" * 300), {"context": "x"})).encode(),
            item="c:" + "0" * 58,
            field="contexts",
            says="302 characters, over IMPORT_MAX_ID_LENGTH (200)",
        ),
        Malformed(
            "swords structure",
            "labels-of-a-control-code.json",
            json.dumps(_set(SWORDS, ("substitute_labels", "s:\x1b[2J"), [])).encode(),
            item="s:\\x1b[2J",  # shown escaped, not sent to the terminal
            field="substitute_labels",
            says="unknown substitute",
        ),
        Malformed(
            "swords structure",
            "labels-of-nothing.json",
            json.dumps(_set(SWORDS, ("substitute_labels", "s:nowhere"), [])).encode(),
            item="s:nowhere",
            field="substitute_labels",
            says="unknown substitute",
        ),
    ]


CASES = [*jsonl_values(), *swords_values(), *csv_values(), *csv_structure(), *whole_files()]
# Each file also goes through one entry point, in turn. An empty upload is refused by the upload
# form itself, before the import sees it, so the empty file goes through the command.
ENTRY_POINTS = ("command", "page", "api")
ROUTED = [(case, ENTRY_POINTS[number % 3] if case.content else "command") for number, case in enumerate(CASES)]


def test_the_generated_files_are_hundreds_and_unique() -> None:
    assert len(CASES) > 500
    assert len({case.name for case in CASES}) == len(CASES)
    assert len({case.content for case in CASES}) == len(CASES)


def _refusal(path: Path) -> ImportFailed:
    with pytest.raises(ImportFailed) as caught:
        benchmark_import(path_or_file=path, benchmark_name="bench")
    return caught.value


def _through(entry_point: str, path: Path) -> str:
    """The message an entry point shows for the file; it must refuse it cleanly."""
    if entry_point == "command":
        with pytest.raises(CommandError) as caught:
            call_command("import_benchmark", str(path), "--benchmark", "bench", stdout=io.StringIO())
        return str(caught.value)
    client = Client()
    client.force_login(make_user("rita", researcher=True))
    upload = SimpleUploadedFile(path.name, path.read_bytes())
    if entry_point == "api":
        with TestCase.captureOnCommitCallbacks(execute=True):  # the import job runs after the request
            response = client.post(reverse("api-benchmark-import", args=["bench"]), {"file": upload})
        assert response.status_code == 202, response.content[:500]
        job = client.get(response.json()["url"]).json()
        assert job["status"] == "failed", job
        return str(job["error"]["detail"])
    Benchmark.objects.get_or_create(name="bench")
    with TestCase.captureOnCommitCallbacks(execute=True):
        response = client.post(reverse("benchmark-import", args=["bench"]), {"file": upload})
    assert response.status_code == 302
    page = client.get(response["Location"])
    assert b'data-status="failed"' in page.content
    return page.content.decode()


@pytest.mark.parametrize(("case", "entry_point"), ROUTED, ids=[f"{case.name}-{via}" for case, via in ROUTED])
def test_a_malformed_file_is_refused_where_it_is_wrong_and_writes_nothing(
    case: Malformed, entry_point: str, tmp_path: Path
) -> None:
    path = tmp_path / case.name
    path.write_bytes(case.content)
    before = row_counts()

    error = _refusal(path)

    assert (error.file, error.line, error.item) == (case.name, case.line, case.item), str(error)
    if case.field is None:
        assert error.field is None, str(error)
    else:
        assert error.field is not None and error.field.startswith(case.field), str(error)
    assert case.says in error.message
    assert str(error).isprintable()
    assert row_counts() == before
    shown = _through(entry_point, path)
    assert (escape(str(error)) if entry_point == "page" else str(error)) in shown
    assert row_counts() == {**before, "benchmarks": before["benchmarks"] + (entry_point == "page")}


SWORDS_CASES = [case for case in CASES if case.name.endswith((".json", ".json.gz"))]


@pytest.mark.parametrize("case", SWORDS_CASES, ids=[case.name for case in SWORDS_CASES])
def test_a_swords_file_read_in_small_blocks_is_refused_in_the_same_words(
    case: Malformed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SWORDS files are read a block at a time: an error met across a block's end reads the same."""
    path = tmp_path / case.name
    path.write_bytes(case.content)
    whole = _refusal(path)
    for block_bytes in (1, 7, 64):
        monkeypatch.setattr(json_stream, "BLOCK_BYTES", block_bytes)
        assert str(_refusal(path)) == str(whole), block_bytes


def _broken_swords() -> dict[str, str]:
    """SWORDS text broken at each place the object's syntax can break, in a member or between them."""
    text = json.dumps(SWORDS, indent=2)
    first_label = text.index('"substitute_labels": {') + len('"substitute_labels": {')
    return {
        "trailing-comma": text.replace('\n  },\n  "targets"', ',\n  },\n  "targets"', 1),
        "no-colon": text.replace(f'"{TID}": {{', f'"{TID}" {{', 1),
        "no-comma": text.replace('"offset": 14,', '"offset": 14', 1),
        "no-comma-between-members": text.replace('\n    },\n    "t:', '\n    }\n    "t:', 1),
        "bare-word-for-id": text[:first_label] + " nothing: [] " + text[first_label:],
        "cut-in-a-member": text[: text.index('"offset": 14') + 12],
        "cut-between-members": text[:first_label],
        "cut-after-a-section": text[: text.index('"targets"') - 2],
        "extra-data": text + "\n{}",
        "number-cut": text.replace('"offset": 14,', '"offset": 14e,', 1),
        "top-level-unclosed-list": "[" + text,
        "nothing-after-brace": "{",
    }


@pytest.mark.parametrize(("name", "text"), _broken_swords().items(), ids=list(_broken_swords()))
def test_bad_swords_syntax_is_named_by_line_and_column_as_the_json_module_names_it(
    name: str, text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(json.JSONDecodeError) as caught:
        json.loads(text)
    expected = (
        f"{name}.json, line {caught.value.lineno}: malformed JSON: {caught.value.msg} at column {caught.value.colno}"
    )
    path = tmp_path / f"{name}.json"
    path.write_text(text)
    for block_bytes in (1, 5, 64, 1024 * 1024):
        monkeypatch.setattr(json_stream, "BLOCK_BYTES", block_bytes)
        with pytest.raises(ImportFailed) as refused:
            benchmark_import(path_or_file=path, benchmark_name="bench", fmt="swords")
        assert str(refused.value) == expected, block_bytes
