"""Import formats are a registry by name: a scheme's format is offered everywhere and fills its scheme's benchmarks."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotation.forms import format_choices
from annotation.importers import ImportFormat, ParsedFile, import_format_names, register_import_format
from annotation.importers.formats import _FORMATS
from annotation.importers.reading import numbered_lines
from annotation.importers.records import TargetRecord, Where
from annotation.models import Benchmark
from annotation.services import ImportFailed, benchmark_import

pytestmark = pytest.mark.django_db


def _lines(stream: io.BufferedIOBase, file: str) -> ParsedFile:
    """A toy format: one context per line, the first word its target, facts the line count."""
    rows = list(numbered_lines(stream, file=file))
    records = (
        TargetRecord(where=Where(file, number), context_text=text.strip(), word=text.split()[0], offset=0, pos="noun")
        for number, text in rows
    )
    return ParsedFile(records=records, total=len(rows), facts={"lines": len(rows)})


@pytest.fixture(autouse=True)
def lines_format() -> Iterator[None]:
    register_import_format(ImportFormat("lines", "one sentence a line", _lines, scheme="prolex"))
    yield
    _FORMATS.pop("lines")


def test_a_registered_format_is_offered_and_creates_a_benchmark_of_its_scheme() -> None:
    assert import_format_names()[:3] == ["csv", "jsonl", "swords"]
    assert "lines" in import_format_names()
    assert ("lines", "one sentence a line") in format_choices()
    path = io.BytesIO(b"Words matter here.\nTime flies.\n")
    path.name = "two.txt"
    report = benchmark_import(path_or_file=path, benchmark_name="toy", fmt="lines")

    benchmark = Benchmark.objects.get(name="toy")
    assert (report.format, report.targets.created) == ("lines", 2)
    # The benchmark it creates takes the format's scheme; the file facts are kept under the format's name.
    assert (benchmark.scheme, benchmark.extra["lines"]) == ("prolex", {"lines": 2})


def test_a_scheme_format_refuses_a_benchmark_of_another_scheme() -> None:
    Benchmark.objects.create(name="sw", scheme="swords")
    with pytest.raises(ImportFailed, match="the lines format imports into benchmarks of the prolex scheme"):
        benchmark_import(path_or_file=io.BytesIO(b"Words matter.\n"), benchmark_name="sw", fmt="lines")
    assert not Benchmark.objects.get(name="sw").targets.exists()


def test_an_unknown_format_names_every_registered_one() -> None:
    with pytest.raises(ImportFailed, match=r"unknown format 'xml' \(use auto, csv, jsonl, swords, .*lines"):
        benchmark_import(path_or_file=io.BytesIO(b"x"), benchmark_name="x", fmt="xml")


def test_a_format_that_sniffs_its_files_is_found_by_auto() -> None:
    register_import_format(
        ImportFormat(
            "hash-lines", "lines after a #lines header", _headed, sniff=lambda head: head.startswith(b"#lines")
        )
    )
    try:
        report = benchmark_import(
            path_or_file=io.BytesIO(b"\xef\xbb\xbf  #lines\nWords matter here.\n"), benchmark_name="sniffed"
        )
        assert (report.format, report.targets.created) == ("hash-lines", 1)
        # A file the format does not claim is still told apart as before: our CSV here.
        other = benchmark_import(
            path_or_file=io.BytesIO(b"context,target,offset,pos,lemma,candidate,sources,labels\n"),
            benchmark_name="plain",
        )
        assert other.format == "csv"
    finally:
        _FORMATS.pop("hash-lines")


def _headed(stream: io.BufferedIOBase, file: str) -> ParsedFile:
    """The lines format after its header line."""
    stream.readline()
    return _lines(stream, file)


@given(head=st.one_of(st.binary(max_size=300), st.text(max_size=300).map(lambda text: text.encode())))
def test_no_format_that_sniffs_raises_on_any_first_bytes(head: bytes) -> None:
    """Detection asks every sniffing format in turn, so none may fail on a file meant for another."""
    for found in _FORMATS.values():
        if found.sniff is not None:
            assert found.sniff(head) in (True, False)
