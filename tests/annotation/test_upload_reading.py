"""The one reader every upload goes through, and what its consumers make of it: split lists, system
result files and gold files are read as streams, and each bound is refused naming its setting."""

from __future__ import annotations

import gzip
import io
import json
import zlib
from pathlib import Path
from typing import Any

import pytest

from analysis import services as analysis_services
from analysis.evaluation import ResultError
from analysis.models import TargetSplit
from analysis.target_ids import swords_target_ids
from annotation.importers.errors import ImportFailed
from annotation.importers.reading import open_binary
from annotation.models import Benchmark
from annotation.services import benchmark_import
from hits.qualification.gold import gold_items_from_path
from schemes import get_scheme
from schemes.base import scheme_qualification
from schemes.swords.evaluation.metrics import parse_result
from tests.annotation.import_helpers import FIXTURES

pytestmark = pytest.mark.django_db


def _read_all(data: bytes, **bounds: Any) -> bytes:
    with open_binary(io.BytesIO(data), file="f", **bounds) as stream:
        return stream.read()


def test_the_reader_refuses_content_past_the_decompressed_bound_plain_or_gzipped(settings: Any) -> None:
    settings.IMPORT_MAX_DECOMPRESSED_BYTES = 1000
    assert _read_all(b"x" * 1000) == b"x" * 1000
    assert _read_all(gzip.compress(b"x" * 1000)) == b"x" * 1000
    for data in (b"x" * 1001, gzip.compress(b"x" * 1001)):
        with pytest.raises(ImportFailed, match=r"larger than 1,000 bytes \(IMPORT_MAX_DECOMPRESSED_BYTES=1000\)"):
            _read_all(data)
    # A caller's own bound, named by its own setting.
    with pytest.raises(ImportFailed, match=r"\(EVALUATION_MAX_RESULT_BYTES=10\)"):
        _read_all(b"x" * 11, max_bytes=10, max_bytes_setting="EVALUATION_MAX_RESULT_BYTES")


def test_the_reader_stops_a_bomb_naming_the_ratio_and_leaves_the_callers_file_open() -> None:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    bomb = b"".join(compressor.compress(b"\0" * 2**20) for _ in range(64)) + compressor.flush()
    source = io.BytesIO(bomb)
    with pytest.raises(ImportFailed, match=r"IMPORT_MAX_GZIP_RATIO=200"), open_binary(source, file="bomb.gz") as stream:
        while stream.read(2**16):
            pass
    assert not source.closed


@pytest.fixture
def benchmark() -> Benchmark:
    benchmark_import(path_or_file=FIXTURES / "swords_small.json.gz", benchmark_name="small")
    return Benchmark.objects.get(name="small")


def test_a_split_list_is_read_a_line_at_a_time_and_refused_where_it_is_wrong(
    benchmark: Benchmark, tmp_path: Path, settings: Any
) -> None:
    (first_pk, first_id), (second_pk, second_id) = list(swords_target_ids(benchmark))[:2]
    listed = tmp_path / "splits.csv.gz"
    listed.write_bytes(gzip.compress(f"\ufefftarget,split\r\n{first_id},dev\r\n\r\n{second_pk},test\r\n".encode()))
    assert analysis_services.benchmark_split_import(benchmark=benchmark, source=str(listed)) == {"dev": 1, "test": 1}

    twice = tmp_path / "twice.csv"
    twice.write_text(f"target,split\n{first_id},dev\n{first_pk},test\n")
    with pytest.raises(analysis_services.SplitError, match=r"twice.csv, line 3: target .* named again"):
        analysis_services.benchmark_split_import(benchmark=benchmark, source=str(twice))

    unknown = tmp_path / "unknown.csv"
    unknown.write_text("target,split\n" + "".join(f"t:none{index},dev\n" for index in range(50)))
    with pytest.raises(analysis_services.SplitError, match=r"50 target\(s\) of unknown.csv are not in small: t:none0"):
        analysis_services.benchmark_split_import(benchmark=benchmark, source=str(unknown))

    settings.IMPORT_MAX_LINE_BYTES = 100
    long = tmp_path / "long.csv"
    long.write_text(f"target,split\n{second_id},{'x' * 200}\n")
    with pytest.raises(analysis_services.SplitError, match=r"long.csv, line 2: .*\(IMPORT_MAX_LINE_BYTES=100\)"):
        analysis_services.benchmark_split_import(benchmark=benchmark, source=str(long))
    damaged = tmp_path / "damaged.csv.gz"
    damaged.write_bytes(gzip.compress(b"target,split\n" * 1000)[:-30])
    with pytest.raises(analysis_services.SplitError, match=r"damaged\.csv\.gz"):
        analysis_services.benchmark_split_import(benchmark=benchmark, source=str(damaged))
    # Refused lists changed nothing.
    assert dict(TargetSplit.objects.values_list("target_id", "name")) == {first_pk: "dev", second_pk: "test"}


def _result(path: Path, document: str) -> Path:
    path.write_text(document)
    return path


def _load(source: Path) -> Any:
    """The substitutes of a result file as a SWORDS benchmark's evaluator reads them."""
    benchmark, _ = Benchmark.objects.get_or_create(name="evaluated", defaults={"scheme": "swords"})
    return analysis_services.result_load(benchmark=benchmark, source=source).substitutes


def test_a_result_file_is_read_member_by_member_as_the_evaluation_reads_it(tmp_path: Path) -> None:
    document = {"substitutes_lemmatized": True, "substitutes": {"t:1": [["amount", 0.8], "sum"], "t:2": []}}
    loaded = _load(_result(tmp_path / "r.json", json.dumps(document, indent=2)))
    assert loaded == parse_result(document)
    gzipped = tmp_path / "r.json.gz"
    gzipped.write_bytes(gzip.compress(json.dumps(document).encode()))
    assert _load(gzipped) == parse_result(document)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"substitutes": {"t:1": [], "t:1": []}}', r"substitutes.t:1: appears twice"),
        ('{"substitutes": {"t:1": [["a", "b"]]}}', r"substitute 0 of t:1 is neither"),
        ('{"substitutes": [["a", 1]]}', r'a result is a JSON object with "substitutes"'),
        ("[1, 2]", r'a result is a JSON object with "substitutes"'),
        ('{"substitutes": {"t:1": [["a", 1]]', r"r.json, line 1: malformed JSON"),
    ],
)
def test_a_bad_result_file_is_refused_naming_where(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ResultError, match=message):
        _load(_result(tmp_path / "r.json", text))


def test_a_result_file_past_a_bound_is_refused_naming_it(tmp_path: Path, settings: Any) -> None:
    many = {"substitutes": {f"t:{index}": [["a", 1.0]] * 10 for index in range(30)}}
    path = _result(tmp_path / "r.json", json.dumps(many))
    settings.EVALUATION_MAX_SUBSTITUTES = 299
    with pytest.raises(ResultError, match=r"more than 299 substitutes in all \(EVALUATION_MAX_SUBSTITUTES=299\)"):
        _load(path)
    settings.EVALUATION_MAX_SUBSTITUTES = 300
    assert _load(path) == parse_result(many)

    settings.EVALUATION_MAX_RESULT_BYTES = 1000
    with pytest.raises(ResultError, match=r"\(EVALUATION_MAX_RESULT_BYTES=1000\)"):
        _load(path)

    # One target's substitutes are decoded whole: past a block of text and IMPORT_MAX_LINE_BYTES, refused.
    settings.EVALUATION_MAX_RESULT_BYTES = 2**30
    settings.EVALUATION_MAX_SUBSTITUTES = 10**6
    settings.IMPORT_MAX_LINE_BYTES = 1000
    one = _result(tmp_path / "one.json", json.dumps({"substitutes": {"t:1": [["word", 0.5]] * 80_000}}))
    with pytest.raises(ResultError, match=r"one value runs past 1,000 bytes \(IMPORT_MAX_LINE_BYTES=1000\)"):
        _load(one)


def test_a_gold_file_is_read_through_the_bounded_reader(tmp_path: Path, settings: Any) -> None:
    line = '{"context": "The bright student.", "target": "bright", "candidate": "clever", "expected": "accept"}\n'
    gold = tmp_path / "gold.jsonl"
    gold.write_text(line * 3)
    swords = scheme_qualification(get_scheme("swords"))
    assert swords is not None
    assert len(gold_items_from_path(gold, gold=swords)) == 3
    settings.QUALIFICATION_MAX_GOLD_FILE_BYTES = len(line) * 2
    with pytest.raises(ImportFailed, match=rf"\(QUALIFICATION_MAX_GOLD_FILE_BYTES={len(line) * 2}\)"):
        gold_items_from_path(gold, gold=swords)
