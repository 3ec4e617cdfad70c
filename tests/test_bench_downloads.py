"""The downloads benchmark runs on small data: every data browser table's CSV, the batch HITs CSV and the
CSV exports are downloaded whole and printed beside a floor that fetched and wrote the same rows
(bench.downloads). It does not pin timings."""

from __future__ import annotations

from typing import Any

import pytest

from bench.downloads import FILTERED, measure
from tests.analysis.test_data_browser import build
from tests.base import Cast

pytestmark = [
    # The floor reads on a connection of its own: the data must be committed.
    pytest.mark.django_db(transaction=True),
    pytest.mark.production_database("the floor replays on PostgreSQL"),
]


def test_every_download_is_measured_whole_beside_a_floor_that_wrote_its_rows(
    cast: Cast, settings: Any, capsys: Any
) -> None:
    settings.CSV_DOWNLOAD_BATCH_ROWS = 2
    benchmark = build("swords", cast)["benchmark"]
    results = measure(1, name=benchmark.name, username=cast.researcher.username)
    names = [result.name for result in results]
    for table, query in FILTERED.items():
        assert table in names and f"{table} ({query})" in names
    assert any(name.startswith("hits-csv") for name in names)
    assert "labels-csv" in names
    for result in results:
        assert result.status == 200, result.url
        assert result.statements > 0 and result.size > 0
        assert min(result.wall) > 0 and min(result.floor_wall) > 0 and min(result.floor_cpu) >= 0
        if result.name in FILTERED:
            # The floor fetched and wrote every row of the table's one stream (the header aside).
            assert result.floor_rows == result.rows - 1 > 0, result.name
    printed = capsys.readouterr().out
    assert all(result.name[:48] in printed for result in results)


@pytest.mark.parametrize("scheme", ["prolex", "sws", "tsar"])
def test_each_schemes_benchmark_is_built_from_its_released_file_and_its_own_exports_measured(
    scheme: str, capsys: Any
) -> None:
    from analysis.exports import DATASET, STATS, export_formats
    from annotation.models import Benchmark
    from bench.downloads import build_scheme
    from hits.models import Answer

    name = build_scheme(scheme, scale=0.005)
    benchmark = Benchmark.objects.get(name=name)
    assert benchmark.scheme == scheme and benchmark.targets.exists()
    # The same file again: the benchmark is kept, not imported twice.
    assert build_scheme(scheme, scale=0.005) == name and Benchmark.objects.filter(scheme=scheme).count() == 1
    # The annotators' work went through the platform's submit.
    assert Answer.objects.filter(item__hit__batch__benchmark=benchmark).exists()

    results = measure(1, name=name)

    expected = {f"{scheme}: {chosen.name}" for chosen in export_formats(benchmark)} - {
        f"{scheme}: {STATS}",
        f"{scheme}: {DATASET}",
    }
    assert {result.name for result in results} == expected
    assert f"{scheme}: {scheme}" in expected
    for result in results:
        assert result.status == 200 and result.size > 0, result.url
        assert min(result.floor_wall) > 0
