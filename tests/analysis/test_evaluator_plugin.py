"""Any scheme's evaluation is a plug-in: a scheme that registers a ``SystemEvaluator`` gets the
page, the API, the command, saved evaluations and the leaderboard, in its own format and figures,
with no change to analysis. Here the test-only scheme of tests/schemes/toy/ is evaluated with the
TSAR-2022 metrics against suggestions the test holds (docs/evaluation.md)."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from analysis.evaluation import (
    EvaluationOptions,
    Figure,
    ResultError,
    ResultStream,
    SystemEvaluator,
    register_evaluator,
    unregister_evaluator,
)
from analysis.services import benchmark_leaderboard, result_load, system_evaluate
from annotation.importers.errors import ImportFailed
from annotation.models import Benchmark, Context
from schemes.tsar import metrics
from schemes.tsar.tsv import read_predictions
from tests.base import Cast
from tests.schemes.toy import TOY, toy_scheme

pytestmark = pytest.mark.django_db

TEXTS = {"The bright sun rose.": "bright", "She is a bright student.": "bright"}
# Every annotator's suggestion per sentence: "shining" 2, "radiant" 1; "clever" 2, "smart" 2 (a tie).
SUGGESTIONS = {
    "The bright sun rose.": ("shining", "radiant", "shining", "bright"),
    "She is a bright student.": ("clever", "smart", "smart", "clever"),
}


class SuggestionsEvaluator(SystemEvaluator):
    """The shared task's predictions file and metrics, with the gold the test holds."""

    scheme = TOY
    format_name = "a predictions TSV"
    format_help = "sentence<TAB>word<TAB>pred1<TAB>pred2..., one line per sentence."
    figures = (
        *(Figure(name, name.upper(), decimals=4) for name in metrics.FIGURE_NAMES),
        Figure("instances", "instances", decimals=0),
    )
    leaderboard: tuple[str, ...] = ("acc@1", "map@3", "potential@3")
    main_figure = "map@3"

    def parse(self, stream: ResultStream, *, file: str) -> list[metrics.Prediction]:
        try:
            return read_predictions(stream, file=file)
        except ImportFailed as exc:
            raise ResultError(str(exc)) from exc

    def _gold(self, benchmark: Benchmark) -> dict[metrics.Key, metrics.GoldInstance]:
        return metrics.gold_index(
            metrics.GoldInstance(context.text, TEXTS[context.text], SUGGESTIONS[context.text])
            for context in Context.objects.filter(benchmark=benchmark).order_by("pk")
        )

    def evaluate(self, benchmark: Benchmark, parsed: Any, options: EvaluationOptions) -> dict[str, Any]:
        try:
            figures, per_line = metrics.evaluate(self._gold(benchmark), parsed)
        except metrics.UnknownInstance as exc:
            raise ResultError(str(exc)) from exc
        return {**figures, "instances": len(per_line)} | ({"per_target": per_line} if options.per_target else {})

    def oracle(self, benchmark: Benchmark, options: EvaluationOptions) -> dict[str, Any]:
        gold = self._gold(benchmark)
        return self.evaluate(benchmark, metrics.gold_as_predictions(gold.values()), options)


@pytest.fixture(autouse=True)
def _evaluated_toy() -> Iterator[None]:
    with toy_scheme():
        register_evaluator(SuggestionsEvaluator())
        try:
            yield
        finally:
            unregister_evaluator(TOY)


@pytest.fixture
def benchmark() -> Benchmark:
    benchmark = Benchmark.objects.create(name="toy-eval", scheme=TOY, scheme_settings={"judgments_per_sentence": 2})
    for text, word in TEXTS.items():
        context = Context.objects.create(benchmark=benchmark, text=text)
        context.targets.create(benchmark=benchmark, word=word, offset=text.index(word), pos="adj")
    return benchmark


# Line 1: shining (gold, top) then radiant (gold): every figure 1 but MAP@3 = (1 + 1) / 3.
# Line 2: brilliant (not gold), smart (gold, tied top): ACC@1 0, ACC@2@Top1 1, MAP@3 = (1/2) / 3.
# ACC@1 = 1/2; ACC@1@Top1 = 1/2; ACC@2@Top1 = 1; MAP@3 = (2/3 + 1/6) / 2 = 5/12 = 0.41666 -> 0.4166;
# Potential@3 = 1.
PREDICTIONS = "The bright sun rose.\tbright\tshining\tradiant\nShe is a bright student.\tbright\tbrilliant\tsmart\n"


def _upload(text: str, name: str = "predictions.tsv", *, gzipped: bool = False) -> SimpleUploadedFile:
    data = gzip.compress(text.encode()) if gzipped else text.encode()
    return SimpleUploadedFile(name, data, content_type="text/tab-separated-values")


def test_the_service_reads_and_evaluates_with_the_schemes_evaluator(benchmark: Benchmark) -> None:
    parsed = result_load(benchmark=benchmark, source=_upload(PREDICTIONS, gzipped=True))

    figures = system_evaluate(benchmark=benchmark, result=parsed)

    assert (figures["acc@1"], figures["acc@1@top1"], figures["acc@2@top1"]) == (0.5, 0.5, 1.0)
    assert (figures["map@3"], figures["potential@3"], figures["instances"]) == (0.4166, 1.0, 2)


def test_a_bad_line_is_named_by_file_line_and_field(benchmark: Benchmark, tmp_path: Path) -> None:
    path = tmp_path / "bad.tsv"
    path.write_text("The bright sun rose.\tbright\tshining\nShe is a bright student.\n", encoding="utf-8")

    with pytest.raises(ResultError, match=r"bad.tsv, line 2, field 'complex word'"):
        result_load(benchmark=benchmark, source=str(path))
    with pytest.raises(CommandError, match=r"bad.tsv, line 2, field 'complex word'"):
        call_command("evaluate_system", benchmark.name, "--result", str(path))


def test_the_command_prints_the_evaluators_figures_and_saves_them(benchmark: Benchmark, tmp_path: Path) -> None:
    path = tmp_path / "predictions.tsv"
    path.write_text(PREDICTIONS, encoding="utf-8")
    text, as_json = StringIO(), StringIO()

    call_command("evaluate_system", benchmark.name, "--result", str(path), stdout=text)
    call_command("evaluate_system", benchmark.name, "--result", str(path), "--json", "--save", "mine", stdout=as_json)

    lines = text.getvalue().splitlines()
    assert [line.split()[0] for line in lines] == [name.upper() for name in metrics.FIGURE_NAMES] + ["instances"]
    assert lines[4].split() == ["MAP@3", "0.4166"]
    assert list(json.loads(as_json.getvalue())) == [*metrics.FIGURE_NAMES, "instances"]
    board = benchmark_leaderboard(benchmark=benchmark)
    # The oracle (the gold ranked by count): MAP@3 of two substitutes each = 2/3 -> 0.6666.
    assert [(row["system"], row["map@3"]) for row in board] == [("oracle", 0.6666), ("mine", 0.4166)]


def test_the_page_and_the_api_show_the_evaluators_format_figures_and_leaderboard(
    benchmark: Benchmark, cast: Cast
) -> None:
    client = Client()
    client.force_login(cast.researcher)
    api = APIClient()
    api.force_authenticate(cast.researcher)
    address = reverse("analysis-evaluation", args=[benchmark.name])

    detail = client.get(reverse("benchmark-detail", args=[benchmark.name])).content.decode()
    page = client.post(address, {"result": _upload(PREDICTIONS), "system": "page"}).content.decode()
    refused = client.post(address, {"result": _upload("The dim sun rose.\tdim\tfaint\n")}).content.decode()
    posted = api.post(
        f"/api/benchmarks/{benchmark.name}/evaluations",
        {"result": _upload(PREDICTIONS, gzipped=True), "system": "api", "per_target": True},
        format="multipart",
    )
    board = api.get(f"/api/benchmarks/{benchmark.name}/evaluations").json()["results"]

    assert address in detail
    assert "sentence&lt;TAB&gt;word&lt;TAB&gt;pred1" in page
    assert 'id="figures"' in page and "<code>map@3</code>" in page and "0.4166" in page
    assert "page is on the leaderboard." in page
    assert 'id="figures"' not in refused and "line 1: no instance of the gold" in refused
    assert posted.status_code == 200, posted.content
    assert posted.json()["map@3"] == 0.4166 and len(posted.json()["per_target"]) == 2
    assert [row["system"] for row in board] == ["oracle", "api", "page"]
    assert board[1]["potential@3"] == 1.0 and "per_target" not in board[1]


def test_without_its_evaluator_the_scheme_offers_no_evaluation(benchmark: Benchmark, cast: Cast) -> None:
    unregister_evaluator(TOY)
    client = Client()
    client.force_login(cast.researcher)

    assert client.get(reverse("analysis-evaluation", args=[benchmark.name])).status_code == 404
    with pytest.raises(CommandError, match="declares no system evaluation"):
        call_command("evaluate_system", benchmark.name, "--result", "missing.tsv")


def test_an_evaluator_must_name_the_figures_its_leaderboard_shows() -> None:
    broken = SuggestionsEvaluator()
    broken.leaderboard = ("acc@1", "f1")

    with pytest.raises(ValueError, match="has no figure f1"):
        register_evaluator(broken)
