"""Every CSV export neutralises cells a spreadsheet would run as formulas; the JSON exports keep
the text exact."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.test import Client

from analysis import services
from annotation.models import Benchmark, Candidate, Context, Label, Target
from annotation.tallies import tallies_benchmark_recount
from hits.exports import hits_csv_write
from hits.services import hits_generate
from tests.base import Cast

pytestmark = pytest.mark.django_db

FORMULA = '=HYPERLINK("https://evil.example","click")'


@pytest.fixture
def benchmark() -> Benchmark:
    benchmark = Benchmark.objects.create(name="formulas")
    text = "They @ran home quickly."
    context = Context.objects.create(benchmark=benchmark, text=text)
    target = Target.objects.create(benchmark=benchmark, context=context, word="@ran", offset=5, pos="verb")
    for word in (FORMULA, "-walked", "hurried"):
        candidate = Candidate.objects.create(target=target, text=word, sources=["thesaurus"])
        Label.objects.create(candidate=candidate, value="accept", origin="+origin", position=0)
    # Written by hand, not by the services that keep the tallies: counted as a bulk load is.
    tallies_benchmark_recount(benchmark_id=benchmark.pk)
    return benchmark


def _export(benchmark: Benchmark, format: str) -> str:
    out = io.StringIO()
    services.benchmark_export(benchmark=benchmark, format=format, out=out)
    return out.getvalue()


def _table(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_the_labels_table_neutralises_formula_cells(benchmark: Benchmark) -> None:
    rows = _table(_export(benchmark, "labels-csv"))

    assert [row["candidate"] for row in rows] == ["'" + FORMULA, "'-walked", "hurried"]
    assert {row["target"] for row in rows} == {"'@ran"}
    assert {row["origin"] for row in rows} == {"'+origin"}


def test_the_candidates_table_neutralises_formula_cells_and_keeps_numbers(benchmark: Benchmark) -> None:
    rows = _table(_export(benchmark, "candidates-csv"))

    assert [row["text"] for row in rows] == ["'" + FORMULA, "'-walked", "hurried"]
    assert [row["score"] for row in rows] == ["1.0", "1.0", "1.0"]


def test_the_json_exports_keep_the_text_exact(benchmark: Benchmark) -> None:
    swords = json.loads(_export(benchmark, "swords"))

    assert sorted(item["substitute"] for item in swords["substitutes"].values()) == sorted(
        [FORMULA, "-walked", "hurried"]
    )
    assert [item["target"] for item in swords["targets"].values()] == ["@ran"]


def test_the_hits_table_neutralises_formula_cells(benchmark: Benchmark, cast: Cast) -> None:
    batch = hits_generate(benchmark=benchmark, step=2, seed=1)
    out = io.StringIO()
    hits_csv_write(batch=batch, out=out)
    (row,) = _table(out.getvalue())
    texts = {row[column] for column in row if column.endswith("_text")}

    assert row["target"] == "'@ran"
    assert {"'" + FORMULA, "'-walked", "hurried", "'@ran"} <= texts

    client = Client()
    client.force_login(cast.researcher)
    download = b"".join(client.get(f"/batches/{batch.pk}/hits.csv").streaming_content).decode()  # type: ignore[attr-defined]
    assert download.replace("\r\n", "\n") == out.getvalue().replace("\r\n", "\n")
