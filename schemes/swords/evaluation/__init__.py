"""SWORDS's system evaluation, as the SWORDS library computes it (docs/evaluation.md): a plug-in of
the analysis room that registers the scheme's :class:`analysis.evaluation.SystemEvaluator`."""

from __future__ import annotations

import json
from typing import Any

from analysis.evaluation import (
    EvaluationOptions,
    Figure,
    ResultError,
    ResultStream,
    SystemEvaluator,
    register_evaluator,
)
from annotation.models import Benchmark
from schemes.swords.evaluation import metrics
from schemes.swords.evaluation.gold import BenchmarkGold, SwordsResult


def _percent(name: str, title: str, html: str) -> Figure:
    return Figure(name=name, title=title, html=html, decimals=2)


FIGURES = (
    _percent("f10_lenient", "F^10 lenient", "F<sup>10</sup> lenient"),
    _percent("fc10_lenient", "F_c^10 lenient", "F<sub>c</sub><sup>10</sup> lenient"),
    _percent("f10_strict", "F^10 strict", "F<sup>10</sup> strict"),
    _percent("fc10_strict", "F_c^10 strict", "F<sub>c</sub><sup>10</sup> strict"),
    _percent("p10_lenient", "P^10 lenient", "P<sup>10</sup> lenient"),
    _percent("r10_lenient", "R^10 lenient", "R<sup>10</sup> lenient"),
    _percent("pc10_lenient", "P_c^10 lenient", "P<sub>c</sub><sup>10</sup> lenient"),
    _percent("rc10_lenient", "R_c^10 lenient", "R<sub>c</sub><sup>10</sup> lenient"),
    _percent("p10_strict", "P^10 strict", "P<sup>10</sup> strict"),
    _percent("r10_strict", "R^10 strict", "R<sup>10</sup> strict"),
    _percent("pc10_strict", "P_c^10 strict", "P<sub>c</sub><sup>10</sup> strict"),
    _percent("rc10_strict", "R_c^10 strict", "R<sub>c</sub><sup>10</sup> strict"),
    _percent("gap", "GAP", "GAP"),
    Figure("targets_evaluated", "targets evaluated", decimals=0),
    Figure("targets_missing", "targets missing", "missing", decimals=0),
)


class SwordsEvaluator(SystemEvaluator):
    """P, R and F at 10 (lenient and strict, acceptable and conceivable) and GAP, in percent."""

    scheme = "swords"
    format_name = "the SWORDS library's result JSON"
    format_help = (
        "The result format of the SWORDS evaluation library (Lee et al. 2021), gzipped or not: "
        '{"substitutes_lemmatized": true, "substitutes": {"t:…": [["substitute", score], …]}}, '
        "with the target ids the library gives this benchmark's targets (those of its export in the "
        "SWORDS format). A bare string scores minus its index."
    )
    figures = FIGURES
    leaderboard = ("f10_lenient", "fc10_lenient", "f10_strict", "fc10_strict", "gap", "targets_missing")
    main_figure = "f10_lenient"

    def parse(self, stream: ResultStream, *, file: str) -> SwordsResult:
        try:
            document = json.load(stream)
        except UnicodeDecodeError as exc:
            raise ResultError(f"{file} is not a JSON result file: not UTF-8 at byte {exc.start}") from exc
        except json.JSONDecodeError as exc:
            raise ResultError(
                f"{file} is not a JSON result file: {exc.msg} (line {exc.lineno}, column {exc.colno})"
            ) from exc
        try:
            return SwordsResult(substitutes=metrics.parse_result(document))
        except ResultError as exc:
            raise ResultError(f"{file}: {exc}") from exc

    def evaluate(self, benchmark: Benchmark, parsed: Any, options: EvaluationOptions) -> dict[str, Any]:
        """``parsed`` is what ``parse`` gives, or the file's JSON document itself."""
        gold = BenchmarkGold(benchmark, options.split)
        figures = metrics.evaluate(gold=gold.targets, rankings=gold.rankings(parsed), per_target=options.per_target)
        return figures.as_dict()

    def oracle(self, benchmark: Benchmark, options: EvaluationOptions) -> dict[str, Any]:
        """Each target's scored candidates ranked by their scores."""
        gold = BenchmarkGold(benchmark, options.split)
        return metrics.evaluate(gold=gold.targets, rankings=gold.oracle_rankings()).as_dict()


register_evaluator(SwordsEvaluator())
