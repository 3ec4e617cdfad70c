"""A benchmark's plots answer their questions and download as SVG and PNG from the page, the API
and the command line: filtered workers appear on the workers plot, marked apart."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Benchmark
from hits.models import Assignment
from review.services import benchmark_refresh
from tests.base import Cast
from tests.review.builders import honest, make_benchmark, simulated, spammer, step2_batch, work_once

pytestmark = pytest.mark.django_db

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def collected() -> Benchmark:
    """A step-2 batch judged by three honest workers and a spammer whose work is filtered."""
    benchmark = make_benchmark(targets=1, candidates=4)
    step2_batch(benchmark)
    sam = simulated("sam")
    work_once(sam, benchmark, spammer)
    for name in ("ann", "ben", "cy"):
        work_once(simulated(name), benchmark, honest())
    benchmark_refresh(benchmark=benchmark)
    assert Assignment.objects.filter(worker=sam, filtered=True).exists()
    return benchmark


def _researcher(cast: Cast) -> Client:
    client = Client()
    client.force_login(cast.researcher)
    return client


def test_the_workers_plot_shows_the_filtered_spammer_as_a_cross(collected: Benchmark, cast: Cast) -> None:
    page = _researcher(cast).get(f"/benchmarks/{collected.name}/statistics/")

    assert page.status_code == 200
    crosses = [e for e in ElementTree.fromstring(page.context["worker_chart"]).iter() if e.get("class") == "marked"]
    assert len(crosses) == 1
    assert "sam (filtered)" in ElementTree.tostring(crosses[0], encoding="unicode")
    assert [row["worker"] for row in page.context["filtered_workers"]] == ["simulated:sam"]


def test_the_agreement_api_lists_filtered_workers(collected: Benchmark, cast: Cast) -> None:
    client = APIClient()
    client.force_authenticate(cast.researcher)

    body = client.get(f"/api/benchmarks/{collected.name}/agreement").json()

    [sam] = body["filtered_worker_agreement"]
    assert sam["worker"] == "simulated:sam" and sam["labels"] > 0 and sam["control_accuracy"] < 0.9


@pytest.mark.parametrize("plot", ["scores", "workers", "rbo"])
def test_every_plot_downloads_as_svg_and_png_from_the_page(collected: Benchmark, cast: Cast, plot: str) -> None:
    client = _researcher(cast)

    svg = client.get(f"/benchmarks/{collected.name}/plots/{plot}.svg")
    png = client.get(f"/benchmarks/{collected.name}/plots/{plot}.png")

    assert svg["Content-Type"] == "image/svg+xml" and f"{collected.name}-{plot}.svg" in svg["Content-Disposition"]
    root = ElementTree.fromstring(svg.content)
    assert root.get("width") and root.get("height") and root.get("width") != "100%"
    assert png["Content-Type"] == "image/png" and png.content.startswith(PNG_MAGIC)
    # Twice the SVG's width, in the PNG header's width field.
    assert int.from_bytes(png.content[16:20], "big") == 2 * int(root.get("width") or 0)


def test_plots_download_from_the_api_with_their_list(collected: Benchmark, cast: Cast) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=cast.researcher).key}")

    listed = client.get(f"/api/benchmarks/{collected.name}/plots").json()
    png = client.get(f"/api/benchmarks/{collected.name}/plots/workers.png")
    unknown = client.get(f"/api/benchmarks/{collected.name}/plots/nothing.png")

    assert [row["name"] for row in listed["results"]] == ["scores", "rbo", "workers"]
    assert listed["results"][0]["png"].endswith(f"/api/benchmarks/{collected.name}/plots/scores.png")
    assert png.status_code == 200 and png.content.startswith(PNG_MAGIC)
    assert unknown.status_code == 404 and "its plots: scores, rbo, workers" in unknown.json()["detail"]


def test_plots_download_from_the_command_line(collected: Benchmark, tmp_path: Path) -> None:
    call_command("benchmark_plot", collected.name, "scores", "--output", str(tmp_path / "s.png"), stderr=io.StringIO())
    call_command("benchmark_plot", collected.name, "rbo", "--output", str(tmp_path / "r.svg"), stderr=io.StringIO())

    assert (tmp_path / "s.png").read_bytes().startswith(PNG_MAGIC)
    assert "No re-annotation is marked" in (tmp_path / "r.svg").read_text()
    with pytest.raises(CommandError, match=r"\.svg or \.png"):
        call_command("benchmark_plot", collected.name, "scores", "--output", str(tmp_path / "s.pdf"))
    with pytest.raises(CommandError, match="no plot named"):
        call_command("benchmark_plot", collected.name, "nothing", "--output", str(tmp_path / "n.svg"))


def test_an_empty_benchmark_reads_well(cast: Cast) -> None:
    benchmark = make_benchmark(targets=1, candidates=4)

    html = _researcher(cast).get(f"/benchmarks/{benchmark.name}/statistics/").content.decode()

    assert "interval [, ]" not in html and "[, ]" not in html
    assert "No interval yet" in html and "No pair of workers shares a candidate yet" in html
