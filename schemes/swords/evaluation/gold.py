"""A SWORDS benchmark as the SWORDS library's evaluation sees it: its targets by their SWORDS ids,
both sides normalised with WordNet (docs/evaluation.md)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, F, Q, QuerySet, TextField, Value
from django.db.models.fields.json import KT

from analysis.evaluation import BenchmarkVersion, ResultError
from analysis.exports.base import benchmark_label_set
from analysis.selectors import in_split, reannotation_origin
from analysis.target_ids import swords_target_rows
from annotation.models import Benchmark, Candidate, CandidateStage, CandidateTally, LabelValue, Target
from annotation.wordnet import lemmatize, wordnet_pos
from annotation.wordnet.stored import lemmas_missing, stored_lemma
from crowdlex.statements import shaped_rows
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


def _as_read(text: str) -> str:
    """A candidate's text normalised already: read with its stored lemma (``_candidate_keys``)."""
    return text


# Where a SWORDS import keeps the file's spelling of a target's word (``Target.extra``).
_FILE_WORD = "extra__swords__target"


class BenchmarkGold:
    """A benchmark's targets as the evaluation sees them, keyed by their SWORDS ids."""

    def __init__(
        self,
        benchmark: Benchmark,
        split: str | None = None,
        version: BenchmarkVersion | None = None,
        target_ids: Collection[int] | None = None,
    ) -> None:
        """``version``: the candidates and labels the benchmark held then (docs/evaluation.md,
        "Versions"); None: those it holds now. ``target_ids``: only those targets (by database id).
        Each target reads its own candidates and labels alone, so a target's gold is the same
        whatever others are read with it, unless the benchmark's expected scores fit priors to every
        candidate (``oracle_parts``)."""
        word_path, read = swords_target_rows(benchmark, split, target_ids)
        targets: Iterable[tuple[int, str, str, str | None]]
        if word_path == _FILE_WORD:
            # The file's spelling of each word is where the ids read it: the words come with the ids.
            found = list(read)
            ids = {pk: tid for pk, tid, *_ in found}
            targets = [(pk, word, pos, file_word) for pk, _, word, pos, file_word in found]
        else:
            ids = {pk: tid for pk, tid, *_ in read}
            chosen = Target.objects.filter(benchmark=benchmark)
            if target_ids is not None:
                chosen = chosen.filter(pk__in=list(target_ids))
            targets = in_split(chosen, split, "").values_list("id", "word", "pos", KT(_FILE_WORD))
        self.benchmark = benchmark
        self.pks = {tid: pk for pk, tid in ids.items()}
        self.normalisers: dict[str, Callable[[str], str]] = {}
        self.lemmas: dict[str, str] = {}
        pos_of: dict[int, str] = {}
        for pk, word, pos, file_word in targets:
            pos_of[pk] = pos
            normalise = _normaliser(pos)
            self.normalisers[ids[pk]] = normalise
            self.lemmas[ids[pk]] = normalise(file_word if file_word is not None else word)
        # The published counts, or under an adaptive benchmark's expected score those a candidate
        # would be expected to have with the design's maximum of labels (docs/design.md §13).
        settings = settings_of(benchmark)
        published = score_priors(settings=settings, rows=()) is None
        # Sources are read only where the priors are fitted per source.
        sources: Any = Value(None, output_field=TextField()) if published else F("candidate__sources")
        if version is None and reannotation_origin(benchmark) is None:
            # The benchmark as it stands: each candidate's valid labels read from its tally (docs/design.md
            # §7, "Tallies"), one row a candidate rather than its labels grouped.
            counts = _tallied(benchmark, split, target_ids, published)
        else:
            counts = _grouped(benchmark, split, version, target_ids, sources)
        # Each candidate's text normalised as the evaluation compares it, from its stored lemma.
        keys = _candidate_keys(counts, pos_of)
        candidates: dict[str, list[tuple[str, float, float]]] = defaultdict(list)
        if published:
            # The published counts: no candidate's source is read. Rows come by target: each
            # target's list is looked up once.
            current, rows = None, None
            for row, key in zip(counts, keys, strict=True):
                if row[0] != current:
                    current, rows = row[0], candidates[ids[row[0]]]
                rows.append((key, float(row[3]), float(row[4])))  # type: ignore[union-attr]
        else:
            keyed = [
                (target_pk, text, a, r, total, source_key(named or []))
                for target_pk, text, _lemma, a, r, total, named in counts
            ]
            priors = score_priors(settings=settings, rows=((key, a, total) for _, _, a, _, total, key in keyed))
            for (target_pk, _text, a, r, total, source), key in zip(keyed, keys, strict=True):
                expected = evaluated_counts(
                    settings=settings, priors=priors, source=source, accepts=a, rejects=r, labels=total
                )
                candidates[ids[target_pk]].append((key, *expected))
        self.targets = {
            tid: metrics.gold_target(target_lemma=self.lemmas[tid], candidates=candidates[tid], normalise=_as_read)
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


def per_target_oracle(benchmark: Benchmark) -> bool:
    """Whether the oracle row can be kept per target: each target's gold reads its own labels
    alone, unless the benchmark scores candidates by their expected counts under priors fitted to
    every candidate of the benchmark (docs/design.md §13), which any label may move."""
    return score_priors(settings=settings_of(benchmark), rows=()) is None


def oracle_parts(
    benchmark: Benchmark, split: str | None, target_ids: list[int] | None
) -> dict[int, metrics.TargetPart]:
    """Each evaluated target's share of the oracle row (by database id; every target of the split
    when ``target_ids`` is None), the benchmark judged by itself: its scored candidates ranked by
    their scores. Targets without a scored candidate are not evaluated and left out."""
    gold = BenchmarkGold(benchmark, split, target_ids=target_ids)
    return {gold.pks[tid]: metrics.oracle_part(target=target) for tid, target in gold.targets.items() if target.scores}


CountRows = list[tuple[int, str, str | None, int, int, int, list[str] | None]]


def _candidate_keys(rows: CountRows, pos_of: dict[int, str]) -> list[str]:
    """Each row's candidate normalised as the evaluation compares it: its text's lemma for the
    target's part of speech, lower-cased and stripped. The lemma is the stored one read with the
    row (``annotation.wordnet.stored``); a text without one is lemmatised here, once, and stored."""
    missing = [(row[1], pos_of[row[0]]) for row in rows if row[2] is None]
    if not missing:
        return [row[2].lower().strip() for row in rows]  # type: ignore[union-attr]
    found = lemmas_missing(pairs=missing)
    return [
        (row[2] if row[2] is not None else found[(row[1], wordnet_pos(pos_of[row[0]]))]).lower().strip() for row in rows
    ]


def _count_columns(total: str, sources: Any) -> tuple[Any, ...]:
    """The columns of a count row (``CountRows``), read from the tallies or the labels alike, whose
    valid-label count is the column ``total``."""
    return (
        "candidate__target_id",
        "candidate__text",
        stored_lemma(candidate="candidate", pos="candidate__target__pos"),
        "accepts",
        "rejects",
        total,
        sources,
    )


def _tallied(benchmark: Benchmark, split: str | None, target_ids: Collection[int] | None, published: bool) -> CountRows:
    """(target, text, stored lemma, accepts, rejects, valid labels, sources) of each candidate with
    valid labels, by target and candidate, from the candidates' tallies (which count a
    re-annotation's labels too); the sources only where not ``published``. Built by the ORM once
    per process (``crowdlex.statements.shaped_rows``): every submit's first reader of the evaluation
    reads them for its targets."""
    ids = None if target_ids is None else list(target_ids)
    return shaped_rows(_tallied_rows, benchmark.pk, split, ids, published)  # type: ignore[return-value]


def _tallied_rows(
    benchmark_id: int, split: str | None, target_ids: list[int] | None, published: bool
) -> QuerySet[CandidateTally, tuple[Any, ...]]:
    sources: Any = Value(None, output_field=TextField()) if published else F("candidate__sources")
    tallies = CandidateTally.objects.filter(candidate__target__benchmark_id=benchmark_id, labels__gt=0).exclude(
        candidate__stage=CandidateStage.EXCLUDED
    )
    if target_ids is not None:
        tallies = tallies.filter(candidate__target_id__in=target_ids)
    return (
        in_split(tallies, split, "candidate__target__")
        .order_by("candidate__target_id", "candidate_id")
        .values_list(*_count_columns("labels", sources))
    )


def _grouped(
    benchmark: Benchmark,
    split: str | None,
    version: BenchmarkVersion | None,
    target_ids: Collection[int] | None,
    sources: Any,
) -> CountRows:
    """The same rows counted from the labels: of a version, or without a re-annotation's."""
    labels = benchmark_label_set(benchmark, split)
    if target_ids is not None:
        labels = labels.filter(candidate__target_id__in=list(target_ids))
    if version is not None:
        labels = labels.filter(id__lte=version.labels_through, candidate_id__lte=version.candidates_through)
    return list(
        labels.order_by()
        .values("candidate__target_id", "candidate_id", "candidate__text")
        .annotate(
            accepts=Count("id", filter=Q(value=LabelValue.ACCEPT)),
            rejects=Count("id", filter=Q(value=LabelValue.REJECT)),
            total=Count("id"),
        )
        .order_by("candidate__target_id", "candidate_id")
        .values_list(*_count_columns("total", sources))
    )
