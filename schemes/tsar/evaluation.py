"""Lexical simplification's system evaluation (a plug-in of the analysis room): the TSAR-2022
shared task's predictions file and its ten official metrics (``metrics``, docs/evaluation.md,
"TSAR-2022"), against the benchmark's gold (``figures.tsar_instances``: the suggestions released
and typed here). The oracle is the gold judged by itself, each instance's substitutes ranked by count.
"""

from __future__ import annotations

from typing import Any

from analysis.evaluation import (
    EvaluationOptions,
    Figure,
    ResultError,
    ResultStream,
    SystemEvaluator,
    register_evaluator,
)
from annotation.importers.errors import ImportFailed
from annotation.models import Benchmark
from schemes.tsar import metrics
from schemes.tsar.figures import tsar_instances
from schemes.tsar.formats import NAME
from schemes.tsar.tsv import read_predictions

TITLES = {
    "acc@1": "ACC@1",
    "acc@1@top1": "ACC@1@Top1",
    "acc@2@top1": "ACC@2@Top1",
    "acc@3@top1": "ACC@3@Top1",
    "map@3": "MAP@3",
    "map@5": "MAP@5",
    "map@10": "MAP@10",
    "potential@3": "Potential@3",
    "potential@5": "Potential@5",
    "potential@10": "Potential@10",
}


class TsarEvaluator(SystemEvaluator):
    scheme = NAME
    format_name = "TSAR-2022 predictions TSV"
    format_help = (
        "One line per instance: sentence<TAB>complex word<TAB>pred1<TAB>pred2..., the substitutes best first "
        "(UTF-8; gzipped or not). Every line counts; a line without predictions is a miss."
    )
    figures = (
        *(Figure(name, TITLES[name], decimals=metrics.DECIMALS) for name in metrics.FIGURE_NAMES),
        Figure("instances", "instances evaluated (lines of the file)", decimals=0),
        Figure("instances_missing", "instances of the benchmark without a line", decimals=0),
    )
    leaderboard = ("acc@1", "acc@1@top1", "map@3", "map@10", "potential@3", "instances_missing")
    # Its gold is what annotators suggested themselves, not judgments of candidates: a crowd
    # accepting a system's word would not make it a suggestion, so nothing is left to judge.
    judging_refusal = (
        "TSAR-2022's gold is the words annotators suggested themselves, not judgments of candidates, so a "
        "system's other words cannot be sent to the crowd to be judged"
    )
    main_figure = "acc@1"

    def parse(self, stream: ResultStream, *, file: str) -> list[metrics.Prediction]:
        try:
            return read_predictions(stream, file=file)  # type: ignore[arg-type]
        except ImportFailed as exc:
            raise ResultError(str(exc)) from exc

    def _gold(self, benchmark: Benchmark, split: str | None) -> dict[metrics.Key, metrics.GoldInstance]:
        try:
            return metrics.gold_index(instance.gold for instance in tsar_instances(benchmark=benchmark, split=split))
        except ValueError as exc:
            raise ResultError(f"the benchmark cannot be evaluated: {exc}") from exc

    def _figures(
        self, gold: dict[metrics.Key, metrics.GoldInstance], predictions: list[metrics.Prediction], per_target: bool
    ) -> dict[str, Any]:
        try:
            figures, per_line = metrics.evaluate(gold, predictions)
        except metrics.UnknownInstance as exc:
            raise ResultError(str(exc)) from exc
        listed = {prediction.key for prediction in predictions}
        found: dict[str, Any] = {
            **figures,
            "instances": len(per_line),
            "instances_missing": sum(1 for key in gold if key not in listed),
        }
        if per_target:
            found["per_target"] = [
                {"line": prediction.line, "complex_word": prediction.complex_word, **scores}
                for prediction, scores in zip(predictions, per_line, strict=True)
            ]
        return found

    def evaluate(self, benchmark: Benchmark, parsed: Any, options: EvaluationOptions) -> dict[str, Any]:
        return self._figures(self._gold(benchmark, options.split), parsed, options.per_target)

    def oracle(self, benchmark: Benchmark, options: EvaluationOptions) -> dict[str, Any] | None:
        gold = self._gold(benchmark, options.split)
        if not gold:
            return None
        return self._figures(gold, metrics.gold_as_predictions(gold.values()), False)


register_evaluator(TsarEvaluator())
