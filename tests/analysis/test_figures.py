"""Statistics and exports go by the benchmark's scheme: each scheme registers its figures and its formats."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from analysis.exports import export_formats, unknown_format
from analysis.services import export_job_create
from annotation.models import Benchmark
from tests.analysis.labelled import labelled_benchmark
from tests.base import PASSWORD, Cast

pytestmark = pytest.mark.django_db


def test_benchmark_stats_names_the_scheme_whose_figures_it_prints() -> None:
    labelled_benchmark("calm", [("calm", "adj", [("still", ["coinco"], "AAR")])])
    out = io.StringIO()
    call_command("benchmark_stats", "calm", "--json", stdout=out)
    stats = json.loads(out.getvalue())
    assert (stats["scheme"], stats["candidates"], stats["labels"]) == ("swords", 1, 3)


def test_the_swords_format_exports_only_swords_benchmarks() -> None:
    other = Benchmark.objects.create(name="px", scheme="prolex")
    assert "swords" not in [found.name for found in export_formats(other)]
    assert unknown_format("swords", other) == (
        f"the swords format does not export prolex benchmarks; expected one of "
        f"{', '.join(found.name for found in export_formats(other))}"
    )
    with pytest.raises(ValueError, match="does not export prolex benchmarks"):
        export_job_create(benchmark=other, format="swords")
    with pytest.raises(CommandError, match="does not export prolex benchmarks"):
        call_command("export_benchmark", "px", "--format", "swords", "--output", "-")


def test_the_api_refuses_a_job_in_a_format_of_another_scheme(cast: Cast) -> None:
    Benchmark.objects.create(name="px", scheme="prolex")
    client = Client()
    client.login(username="rita", password=PASSWORD)
    response = client.post("/api/benchmarks/px/exports", {"format": "swords"}, content_type="application/json")
    assert response.status_code == 400
    assert "does not export prolex benchmarks" in str(response.json()["format"])


def test_the_proposals_are_offered_only_where_a_step_is_the_generation_task(cast: Cast) -> None:
    Benchmark.objects.create(name="px", scheme="prolex")
    Benchmark.objects.create(name="sw", scheme="swords")
    client = Client()
    client.login(username="rita", password=PASSWORD)

    assert client.get("/benchmarks/sw/proposals/").status_code == 200
    assert client.get("/api/benchmarks/sw/proposals").status_code == 200
    page = client.get("/benchmarks/px/proposals/")
    assert page.status_code == 404
    api = client.get("/api/benchmarks/px/proposals")
    assert api.status_code == 404 and "no step of it is the generation task" in str(api.json())
    assert "proposals-csv" in [found.name for found in export_formats(Benchmark.objects.get(name="sw"))]
    assert "proposals-csv" not in [found.name for found in export_formats(Benchmark.objects.get(name="px"))]


def test_the_filter_audit_answers_404_for_a_scheme_without_a_reduce_step(cast: Cast) -> None:
    Benchmark.objects.create(name="sw", scheme="sws")
    client = Client()
    client.login(username="rita", password=PASSWORD)

    response = client.get("/api/benchmarks/sw/filter-audit")

    assert response.status_code == 404 and "no reduce step to audit" in str(response.json())
