"""Evaluating a system's result file against a benchmark and the benchmark's leaderboard
(docs/evaluation.md). The maths is ``analysis.evaluation``; this loads the benchmark and
normalises both sides with WordNet."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Count, Q
from django.db.models.fields.json import KT

from analysis import evaluation
from analysis.exports.base import benchmark_label_set
from analysis.figures import offers_evaluation
from analysis.models import SystemEvaluation
from analysis.selectors import in_split
from analysis.target_ids import swords_target_ids
from annotation.importers import ImportFailed
from annotation.importers.json_stream import READ_BY_MEMBER, JsonText, ObjectReader
from annotation.importers.json_values import JsonValueError, field_name
from annotation.importers.reading import READ_ERRORS, Source, open_binary, source_name
from annotation.models import Benchmark, LabelValue, Target
from annotation.wordnet import lemmatize

ORACLE = "oracle"


def _normaliser(pos: str) -> Callable[[str], str]:
    def normalise(text: str) -> str:
        return lemmatize(text, pos=pos).lower().strip()

    return normalise


class BenchmarkGold:
    """A benchmark's targets as the evaluation sees them, keyed by their SWORDS ids."""

    def __init__(self, benchmark: Benchmark, split: str | None = None) -> None:
        ids = dict(swords_target_ids(benchmark, split))
        targets = in_split(Target.objects.filter(benchmark=benchmark), split, "").values_list(
            "id", "word", "pos", KT("extra__swords__target")
        )
        self.normalisers: dict[str, Callable[[str], str]] = {}
        self.lemmas: dict[str, str] = {}
        for pk, word, pos, file_word in targets:
            normalise = _normaliser(pos)
            self.normalisers[ids[pk]] = normalise
            self.lemmas[ids[pk]] = normalise(file_word if file_word is not None else word)
        counts = (
            benchmark_label_set(benchmark, split)
            .order_by()
            .values("candidate__target_id", "candidate_id", "candidate__text")
            .annotate(
                accepts=Count("id", filter=Q(value=LabelValue.ACCEPT)),
                rejects=Count("id", filter=Q(value=LabelValue.REJECT)),
            )
            .order_by("candidate__target_id", "candidate_id")
            .values_list("candidate__target_id", "candidate__text", "accepts", "rejects")
        )
        candidates: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
        for target_pk, text, accepts, rejects in counts:
            candidates[ids[target_pk]].append((text, accepts, rejects))
        self.targets = {
            tid: evaluation.gold_target(
                target_lemma=self.lemmas[tid], candidates=candidates[tid], normalise=self.normalisers[tid]
            )
            for tid in ids.values()
        }

    def rankings(self, result: Any) -> dict[str, list[str]]:
        """A result file's substitutes, normalised and ranked per target; an unknown target is an error."""
        substitutes = evaluation.parse_result(result)
        unknown = [tid for tid in substitutes if tid not in self.targets]
        if unknown:
            shown = ", ".join(unknown[:3]) + (f" and {len(unknown) - 3} more" if len(unknown) > 3 else "")
            raise evaluation.ResultError(
                f"{len(unknown)} target id(s) of the result are not in the benchmark: {shown} "
                "(ids are those of the benchmark's SWORDS export)"
            )
        return {
            tid: evaluation.system_ranking(
                substitutes=rows, target_lemma=self.lemmas[tid], normalise=self.normalisers[tid]
            )
            for tid, rows in substitutes.items()
        }

    def oracle_rankings(self) -> dict[str, list[str]]:
        """Each target's scored candidates, best first: the benchmark judged by itself."""
        return {
            tid: sorted(target.scores, key=lambda text: -target.scores[text]) for tid, target in self.targets.items()
        }


def result_load(*, source: Source) -> dict[str, Any]:
    """A result file (a path or a binary upload, gzipped or not) as the JSON document the
    evaluation reads, in bounded memory (docs/evaluation.md, "Limits").

    It is read as a stream through the reader every upload goes through: at most
    ``EVALUATION_MAX_RESULT_BYTES`` of content once decompressed, each target's substitutes
    decoded on their own (at most ``IMPORT_MAX_LINE_BYTES`` of text each) and kept as they are
    checked, at most ``EVALUATION_MAX_SUBSTITUTES`` of them in all. The text itself is let go a
    block at a time, so memory follows the substitutes kept, not the size of the file."""
    name = source_name(source)
    limit: int = settings.EVALUATION_MAX_SUBSTITUTES
    substitutes: dict[str, Any] = {}
    kept = 0

    def member(section: str, target_id: str, value: Any) -> bool:
        nonlocal kept
        if target_id in substitutes:
            return True
        if isinstance(value, list):
            kept += len(value)
            if kept > limit:
                raise evaluation.ResultError(
                    f"{name}: refused: more than {limit:,} substitutes in all (EVALUATION_MAX_SUBSTITUTES={limit})"
                )
        # Checked and shaped as the evaluation reads it, one target at a time.
        evaluation.parse_result({"substitutes": {target_id: value}})
        substitutes[target_id] = value
        return False

    try:
        with open_binary(
            source,
            file=name,
            max_bytes=settings.EVALUATION_MAX_RESULT_BYTES,
            max_bytes_setting="EVALUATION_MAX_RESULT_BYTES",
        ) as stream:
            text = _BoundedText(stream, file=name)
            reader = ObjectReader(text, sections=("substitutes",), member=member)
            document = reader.read(whole=lambda _: None)
    except ImportFailed as exc:
        raise evaluation.ResultError(str(exc)) from exc
    except JsonValueError as exc:
        raise evaluation.ResultError(f"{name}, {field_name(exc.path) or 'top level'}: {exc.message}") from exc
    except READ_ERRORS as exc:
        raise evaluation.ResultError(f"{name} is not a JSON result file: {exc}") from exc
    if not isinstance(document, dict) or document.get("substitutes") is not READ_BY_MEMBER:
        raise evaluation.ResultError(
            f'{name}: a result is a JSON object with "substitutes": {{target id: [[substitute, score], ...]}}'
        )
    document["substitutes"] = substitutes
    return document


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


class EvaluationUnavailable(LookupError):
    """The benchmark's scheme declares no system evaluation (``SchemeFigures.evaluation``)."""


def evaluation_check(*, benchmark: Benchmark) -> None:
    """Refuse, by name, to evaluate against a benchmark whose scheme declares no evaluation."""
    if not offers_evaluation(benchmark):
        raise EvaluationUnavailable(
            f"{benchmark.name} is a {benchmark.get_scheme_display()} benchmark: its scheme declares no "
            "system evaluation (a ranking of substitutes scored as the swords library does)"
        )


def system_evaluate(
    *, benchmark: Benchmark, result: Any, per_target: bool = False, split: str | None = None
) -> evaluation.Figures:
    """The figures of a result file (parsed JSON) against the benchmark, or one split of it, as the
    SWORDS library gives them.

    Raises ``analysis.evaluation.ResultError`` for a malformed file or a target id outside the
    benchmark (or the split), ``EvaluationUnavailable`` when its scheme declares no evaluation.
    """
    evaluation_check(benchmark=benchmark)
    gold = BenchmarkGold(benchmark, split)
    return evaluation.evaluate(gold=gold.targets, rankings=gold.rankings(result), per_target=per_target)


def system_evaluation_save(
    *,
    benchmark: Benchmark,
    system: str,
    figures: evaluation.Figures,
    split: str | None = None,
    created_by: User | AnonymousUser | None = None,
) -> SystemEvaluation:
    """Keep a system's figures on the leaderboard of the benchmark, or of the split they are of (a
    second save under a name replaces the first)."""
    if not system.strip() or system.strip() == ORACLE:
        raise ValueError(f"a system needs a name other than {ORACLE!r}")
    saved, _ = SystemEvaluation.objects.update_or_create(
        benchmark=benchmark,
        system=system.strip(),
        split=split or "",
        defaults={
            "figures": {key: value for key, value in figures.as_dict().items() if key != "per_target"},
            "created_by": created_by if isinstance(created_by, User) else None,
        },
    )
    return saved


def benchmark_leaderboard(*, benchmark: Benchmark, split: str | None = None) -> list[dict[str, Any]]:
    """The leaderboard of the benchmark or of one split: the oracle row, computed from the
    benchmark itself, then the systems saved for it by descending F^10 (lenient)."""
    evaluation_check(benchmark=benchmark)
    gold = BenchmarkGold(benchmark, split)
    oracle = evaluation.evaluate(gold=gold.targets, rankings=gold.oracle_rankings())
    rows = [{"system": ORACLE, "oracle": True, **oracle.as_dict()}]
    saved = SystemEvaluation.objects.filter(benchmark=benchmark, split=split or "")
    systems = [{"system": row.system, "oracle": False, **row.figures} for row in saved]
    return rows + sorted(systems, key=lambda row: -row["f10_lenient"])
