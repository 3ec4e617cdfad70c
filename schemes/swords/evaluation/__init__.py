"""SWORDS's system evaluation, as the SWORDS library computes it (docs/evaluation.md): a plug-in of
the analysis room that registers the scheme's :class:`analysis.evaluation.SystemEvaluator`."""

from __future__ import annotations

import io
from typing import Any, cast

from django.conf import settings

from analysis.evaluation import (
    COMPLETE,
    LENIENT,
    STRICT,
    BenchmarkVersion,
    BootstrapOptions,
    EvaluationOptions,
    Figure,
    ResultError,
    ResultStream,
    SystemEvaluator,
    register_evaluator,
)
from annotation.changes import benchmark_kept
from annotation.importers import ImportFailed
from annotation.importers.json_stream import READ_BY_MEMBER, JsonText, ObjectReader
from annotation.importers.json_values import JsonValueError, field_name
from annotation.models import Benchmark
from schemes.swords.evaluation import metrics
from schemes.swords.evaluation.gold import BenchmarkGold, SwordsResult, oracle_parts, per_target_oracle


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


COMPLETE_FIGURES = (
    _percent("p10", "P^10", "P<sup>10</sup>"),
    _percent("r10", "R^10", "R<sup>10</sup>"),
    _percent("f10", "F^10", "F<sup>10</sup>"),
    _percent("pc10", "P_c^10", "P<sub>c</sub><sup>10</sup>"),
    _percent("rc10", "R_c^10", "R<sub>c</sub><sup>10</sup>"),
    _percent("fc10", "F_c^10", "F<sub>c</sub><sup>10</sup>"),
    _percent("gap", "GAP", "GAP"),
)
assert tuple(figure.name for figure in COMPLETE_FIGURES) == metrics.SETTING_FIGURES


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
        """The result's substitutes, read as a stream: each target's list is decoded on its own (at
        most ``IMPORT_MAX_LINE_BYTES`` of text) and checked as it comes, and at most
        ``EVALUATION_MAX_SUBSTITUTES`` are kept in all, so memory follows the substitutes kept, not
        the size of the file (docs/evaluation.md, "Limits")."""
        limit: int = settings.EVALUATION_MAX_SUBSTITUTES
        substitutes: dict[str, list[tuple[str, float]]] = {}
        kept = 0

        def member(section: str, target_id: str, value: Any) -> bool:
            nonlocal kept
            if target_id in substitutes:
                return True
            if isinstance(value, list):
                kept += len(value)
                if kept > limit:
                    raise ResultError(
                        f"{file}: refused: more than {limit:,} substitutes in all (EVALUATION_MAX_SUBSTITUTES={limit})"
                    )
            # Checked and shaped as the evaluation reads it, one target at a time.
            substitutes.update(metrics.parse_result({"substitutes": {target_id: value}}))
            return False

        if isinstance(stream, io.TextIOBase):
            # Text handed in by a caller in this process (a file's upload is always bytes).
            stream = io.BytesIO(stream.read().encode())
        try:
            text = _BoundedText(cast(io.BufferedIOBase, stream), file=file)
            reader = ObjectReader(text, sections=("substitutes",), member=member)
            document = reader.read(whole=lambda _: None)
        except ResultError as exc:
            raise ResultError(str(exc) if str(exc).startswith(file) else f"{file}: {exc}") from exc
        except JsonValueError as exc:
            raise ResultError(f"{file}, {field_name(exc.path) or 'top level'}: {exc.message}") from exc
        except UnicodeDecodeError as exc:
            raise ResultError(f"{file} is not a JSON result file: not UTF-8 at byte {exc.start}") from exc
        if not isinstance(document, dict) or document.get("substitutes") is not READ_BY_MEMBER:
            raise ResultError(
                f'{file}: a result is a JSON object with "substitutes": {{target id: [[substitute, score], ...]}}'
            )
        return SwordsResult(substitutes=substitutes)

    def evaluate(self, benchmark: Benchmark, parsed: Any, options: EvaluationOptions) -> dict[str, Any]:
        """``parsed`` is what ``parse`` gives, or the file's JSON document itself."""
        gold = BenchmarkGold(benchmark, options.split, options.version)
        figures = metrics.evaluate(gold=gold.targets, rankings=gold.rankings(parsed), per_target=options.per_target)
        return figures.as_dict()

    def oracle(self, benchmark: Benchmark, options: EvaluationOptions) -> dict[str, Any]:
        """Each target's scored candidates ranked by their scores. As the benchmark stands now, each
        target's share is kept per target with their exact sum beside them
        (``annotation.changes.benchmark_kept``, ``metrics.PartsSum``): after a submit only the
        targets it touched are read again and their shares taken out of the sum and added anew, no
        other target's share read (docs/design.md §7, "Incremental figures"), their candidates'
        lemmas with them (docs/design.md §10, "Stored lemmas")."""
        if options.version is None and per_target_oracle(benchmark):
            split = options.split
            kept = benchmark_kept(
                benchmark_id=benchmark.pk,
                # Named apart from the shares kept before their sum was kept beside them.
                name=f"oracle-sum:{split or ''}",
                compute=lambda target_ids: oracle_parts(benchmark, split, target_ids),
                summarise=metrics.parts_summed,
                combine=metrics.sums_combined,
                take=metrics.sum_less,
            )
            # The oracle's GAPs are 1 or -1: their exact sum is their float sum in the targets'
            # order, as the whole evaluation sums them (``metrics.figures_of_sum``).
            return metrics.figures_of_sum(kept.total).as_dict()
        gold = BenchmarkGold(benchmark, options.split, options.version)
        return metrics.evaluate(gold=gold.targets, rankings=gold.oracle_rankings()).as_dict()

    judges_unscored = True
    complete_figures = COMPLETE_FIGURES

    def unscored(self, benchmark: Benchmark, parsed: Any, *, top_k: int, split: str | None) -> dict[int, list[str]]:
        return BenchmarkGold(benchmark, split).unscored(parsed, top_k=top_k)

    def complete(
        self,
        benchmark: Benchmark,
        parsed: Any,
        *,
        before: BenchmarkVersion,
        after: BenchmarkVersion,
        split: str | None,
        bootstrap: BootstrapOptions,
    ) -> dict[str, Any]:
        """Lenient and strict on the benchmark ``before``, complete (the strict rule: a substitute
        still unscored counts as wrong) ``after``; GAP ranks the lenient list in the lenient setting."""
        # Lenient and strict read the same per-target details (before), complete those after.
        details: dict[str, dict[str, dict[str, float | int]]] = {}
        for setting, version in ((LENIENT, before), (COMPLETE, after)):
            gold = BenchmarkGold(benchmark, split, version)
            evaluated = metrics.evaluate(gold=gold.targets, rankings=gold.rankings(parsed), per_target=True)
            details[setting] = evaluated.per_target or {}
        details[STRICT] = details[LENIENT]
        modes = {LENIENT: "lenient", STRICT: "strict", COMPLETE: "strict"}
        return {
            "figures": {
                setting: metrics.setting_figures(details[setting], mode=mode) for setting, mode in modes.items()
            },
            "intervals": {
                setting: metrics.bootstrap_intervals(
                    details[setting],
                    mode=mode,
                    resamples=bootstrap.resamples,
                    seed=bootstrap.seed,
                    level=bootstrap.level,
                )
                for setting, mode in modes.items()
            },
            "targets": {setting: len(details[setting]) for setting in modes},
        }


class _BoundedText(JsonText):
    """The text of a result file, holding at most ``IMPORT_MAX_LINE_BYTES`` beyond the block
    being read: one target's substitutes are decoded whole, so that bounds what one may take."""

    def more(self, keep_from: int) -> bool:
        read = super().more(keep_from)
        limit: int = settings.IMPORT_MAX_LINE_BYTES
        if len(self.text) > self.block_bytes + limit:
            raise ImportFailed(
                f"refused: one value runs past {limit:,} bytes (IMPORT_MAX_LINE_BYTES={limit})",
                file=self.file,
                line=self.line_of(self.base),
            )
        return read


register_evaluator(SwordsEvaluator())
