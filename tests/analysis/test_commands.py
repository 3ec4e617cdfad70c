import gzip
import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Benchmark
from annotation.services import benchmark_import

pytestmark = pytest.mark.django_db

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "swords_small.json"


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.fixture(autouse=True)
def small() -> Benchmark:
    benchmark_import(path_or_file=FIXTURE, benchmark_name="small")
    return Benchmark.objects.get(name="small")


def test_benchmark_stats_prints_table_2_as_json() -> None:
    stats = json.loads(_run("benchmark_stats", "small", "--json"))
    assert {"per_target", "per_target_nonempty", "abstain_share", "by_pos", "by_source"} <= set(stats)
    assert set(stats["per_target"]) == {"candidates", "inconceivable", "conceivable", "acceptable"}
    assert stats["per_target"]["candidates"] == pytest.approx(9 / 3)
    assert "acceptable" in _run("benchmark_stats", "small")
    with pytest.raises(CommandError, match="thresholds"):
        _run("benchmark_stats", "small", "--acceptable", "0.1", "--conceivable", "0.4")


def test_filter_audit_prints_the_shares() -> None:
    audit = json.loads(_run("filter_audit", "small", "--json", "--min-labels", "5"))
    assert {"dropped", "dropped_with_accept", "share_dropped_with_accept", "share_still_unacceptable"} <= set(audit)
    assert audit["min_labels"] == 5
    assert "share_still_unacceptable" in _run("filter_audit", "small")
    with pytest.raises(CommandError, match="no benchmark"):
        _run("filter_audit", "nope")


def test_export_benchmark_writes_each_format(tmp_path: Path) -> None:
    _run("export_benchmark", "small", "--format", "swords", "--output", str(tmp_path / "small.json.gz"))
    assert gzip.decompress((tmp_path / "small.json.gz").read_bytes()).decode() == FIXTURE.read_text(encoding="utf-8")
    _run("export_benchmark", "small", "--format", "candidates-csv", "--output", str(tmp_path / "c.csv"))
    assert (tmp_path / "c.csv").read_text().count("\n") == 10
    stats = json.loads(_run("export_benchmark", "small", "--format", "stats", "--output", "-"))
    assert stats["statistics"]["candidates"] == 9
    with pytest.raises(CommandError):
        _run("export_benchmark", "small", "--format", "xml", "--output", str(tmp_path / "x"))


def test_benchmark_agreement_and_the_re_annotation_mark() -> None:
    assert "alpha" in _run("benchmark_agreement", "small", "--resamples", "50")
    assert json.loads(_run("benchmark_agreement", "small", "--json", "--resamples", "50"))["rbo"] is None
    assert _run("benchmark_reannotation", "small").strip() == "swords_small.json"
    assert _run("benchmark_reannotation", "small", "swords_small.json").startswith("* ")
    assert _run("benchmark_reannotation", "small", "--clear").startswith("  ")
    with pytest.raises(CommandError, match="no labels"):
        _run("benchmark_reannotation", "small", "elsewhere")
