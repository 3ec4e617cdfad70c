"""A SWORDS benchmark as the SWORDS library's evaluation sees it: its targets by their SWORDS ids,
both sides normalised with WordNet (docs/evaluation.md)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Q
from django.db.models.fields.json import KT

from analysis.evaluation import BenchmarkVersion, ResultError
from analysis.exports.base import benchmark_label_set
from analysis.selectors import in_split
from analysis.target_ids import swords_target_ids
from annotation.models import Benchmark, Candidate, LabelValue, Target
from annotation.wordnet import lemmatize
from schemes.swords.evaluation import metrics
from schemes.swords.progress import evaluated_counts, score_priors
from schemes.swords.settings import settings_of
from schemes.swords.stopping import source_key


@dataclass(frozen=True)
class SwordsResult:
    """A result file's substitutes per target id, checked (``metrics.parse_result``)."""

    substitutes: Mapping[str, Sequence[tuple[str, float]]]


def _normaliser(pos: str) -> Callable[[str], str]:
    def normalise(text: str) -> str:
        return lemmatize(text, pos=pos).lower().strip()

    return normalise


class BenchmarkGold:
    """A benchmark's targets as the evaluation sees them, keyed by their SWORDS ids."""

    def __init__(self, benchmark: Benchmark, split: str | None = None, version: BenchmarkVersion | None = None) -> None:
        """``version``: the candidates and labels the benchmark held then (docs/evaluation.md,
        "Versions"); None: those it holds now."""
        ids = dict(swords_target_ids(benchmark, split))
        self.benchmark = benchmark
        self.pks = {tid: pk for pk, tid in ids.items()}
        targets = in_split(Target.objects.filter(benchmark=benchmark), split, "").values_list(
            "id", "word", "pos", KT("extra__swords__target")
        )
        self.normalisers: dict[str, Callable[[str], str]] = {}
        self.lemmas: dict[str, str] = {}
        for pk, word, pos, file_word in targets:
            normalise = _normaliser(pos)
            self.normalisers[ids[pk]] = normalise
            self.lemmas[ids[pk]] = normalise(file_word if file_word is not None else word)
        labels = benchmark_label_set(benchmark, split)
        if version is not None:
            labels = labels.filter(id__lte=version.labels_through, candidate_id__lte=version.candidates_through)
        counts = list(
            labels.order_by()
            .values("candidate__target_id", "candidate_id", "candidate__text")
            .annotate(
                accepts=Count("id", filter=Q(value=LabelValue.ACCEPT)),
                rejects=Count("id", filter=Q(value=LabelValue.REJECT)),
                total=Count("id"),
            )
            .order_by("candidate__target_id", "candidate_id")
            .values_list("candidate__target_id", "candidate__text", "accepts", "rejects", "total", "candidate__sources")
        )
        # The published counts, or under an adaptive benchmark's expected score those a candidate
        # would be expected to have with the design's maximum of labels (docs/design.md §13).
        settings = settings_of(benchmark)
        keyed = [
            (target_pk, text, a, r, total, source_key(sources or []))
            for target_pk, text, a, r, total, sources in counts
        ]
        priors = score_priors(settings=settings, rows=((key, a, total) for _, _, a, _, total, key in keyed))
        candidates: dict[str, list[tuple[str, float, float]]] = defaultdict(list)
        for target_pk, text, a, r, total, key in keyed:
            candidates[ids[target_pk]].append(
                (
                    text,
                    *evaluated_counts(settings=settings, priors=priors, source=key, accepts=a, rejects=r, labels=total),
                )
            )
        self.targets = {
            tid: metrics.gold_target(
                target_lemma=self.lemmas[tid], candidates=candidates[tid], normalise=self.normalisers[tid]
            )
            for tid in ids.values()
        }

    def rankings(self, result: SwordsResult | Any) -> dict[str, list[str]]:
        """A result's substitutes (parsed, or the file's JSON document), normalised and ranked per
        target; an unknown target is an error."""
        substitutes = result.substitutes if isinstance(result, SwordsResult) else metrics.parse_result(result)
        unknown = [tid for tid in substitutes if tid not in self.targets]
        if unknown:
            shown = ", ".join(unknown[:3]) + (f" and {len(unknown) - 3} more" if len(unknown) > 3 else "")
            raise ResultError(
                f"{len(unknown)} target id(s) of the result are not in the benchmark: {shown} "
                "(ids are those of the benchmark's SWORDS export)"
            )
        return {
            tid: metrics.system_ranking(
                substitutes=rows, target_lemma=self.lemmas[tid], normalise=self.normalisers[tid]
            )
            for tid, rows in substitutes.items()
        }

    def oracle_rankings(self) -> dict[str, list[str]]:
        """Each target's scored candidates, best first: the benchmark judged by itself."""
        return {
            tid: sorted(target.scores, key=lambda text: -target.scores[text]) for tid, target in self.targets.items()
        }

    def unscored(self, result: SwordsResult | Any, *, top_k: int) -> dict[int, list[str]]:
        """Per target (by its database id), the substitutes among the result's top ``top_k`` that,
        normalised as the evaluation compares them, the benchmark has not scored and no candidate of
        the target already is (one still being collected is left to its own collection)."""
        rankings = self.rankings(result)
        wanted = {self.pks[tid]: tid for tid, ranking in rankings.items() if ranking}
        present: dict[int, set[str]] = defaultdict(set)
        rows = Candidate.objects.filter(target_id__in=list(wanted)).values_list("target_id", "text")
        for target_pk, text in rows.iterator(chunk_size=5000):
            present[target_pk].add(self.normalisers[wanted[target_pk]](text))
        substitutes = result.substitutes if isinstance(result, SwordsResult) else metrics.parse_result(result)
        found: dict[int, list[str]] = {}
        for target_pk, tid in sorted(wanted.items()):
            scored = self.targets[tid].scores
            # Each kept in the system's own spelling (its first, best-scored one), so the candidate
            # reads as the system wrote it and matches a released file's text.
            spelling: dict[str, str] = {}
            for text, _score in sorted(substitutes[tid], key=lambda row: -row[1]):
                spelling.setdefault(self.normalisers[tid](text), text.strip())
            texts = [
                spelling[key] for key in rankings[tid][:top_k] if key not in scored and key not in present[target_pk]
            ]
            if texts:
                found[target_pk] = texts
        return found
