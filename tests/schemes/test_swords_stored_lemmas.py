"""The evaluation reads candidates' lemmas stored once per text (docs/design.md §10, "Stored lemmas"):
its figures equal those of lemmatising every candidate with WordNet in the request, whatever the
candidates, their targets' parts of speech and what is stored already, and a text is lemmatised once."""

from __future__ import annotations

import itertools
from collections import defaultdict
from typing import Any

import pytest
from django.core.cache import cache
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import annotation.wordnet as wordnet_module
from analysis.evaluation import BenchmarkVersion, EvaluationOptions
from analysis.services import benchmark_version_now
from annotation.models import Benchmark, Candidate, CandidateStage, CandidateTally, Lemma, Target
from annotation.services import candidates_propose
from annotation.wordnet import lemmatize
from annotation.wordnet.stored import lemma_column
from schemes.swords.evaluation import SwordsEvaluator, metrics
from schemes.swords.evaluation.gold import BenchmarkGold
from tests.analysis.labelled import labelled_benchmark

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_kept_figures() -> None:
    """Figures kept by an earlier test under the same benchmark id are not this test's."""
    cache.clear()


# Forms WordNet reduces differently for each part of speech, capitalised and spaced ones it leaves
# alone, and phrases: many normalise alike within one target, so labels are pooled.
WORDS = [
    "running",
    "ran",
    "runs",
    "run",
    "geese",
    "goose",
    "better",
    "best",
    "good",
    "happier",
    "happiest",
    "leaves",
    "leaving",
    "left",
    "axes",
    "saw",
    "seen",
    "Houses",
    "houses",
    "fast",
    " fast ",
    "faster",
    "look up",
    "looked up",
    "bright",
    "brighter",
    "brightly",
    "quickly",
    "men",
    "lying",
    "lies",
    "was",
]
POS = ["noun", "verb", "adj", "adv", ""]
_names = itertools.count()


def _today(benchmark: Benchmark, version: BenchmarkVersion | None = None) -> dict[str, Any]:
    """The oracle row as the evaluation computed it before lemmas were stored: every candidate
    lemmatised with WordNet in the request (the counts read from the tallies or the labels alike)."""
    gold = BenchmarkGold(benchmark, version=version)
    reference: dict[str, metrics.GoldTarget] = {}
    pos_of = dict(Target.objects.filter(benchmark=benchmark).values_list("id", "pos"))
    rows: dict[int, list[tuple[str, float, float]]] = defaultdict(list)
    tallies = (
        CandidateTally.objects.filter(candidate__target__benchmark=benchmark, labels__gt=0)
        .exclude(candidate__stage=CandidateStage.EXCLUDED)
        .order_by("candidate__target_id", "candidate_id")
        .values_list("candidate__target_id", "candidate__text", "accepts", "rejects")
    )
    for target_pk, text, accepts, rejects in tallies:
        rows[target_pk].append((text, float(accepts), float(rejects)))
    for tid, target_pk in gold.pks.items():
        pos = pos_of[target_pk]
        reference[tid] = metrics.gold_target(
            target_lemma=gold.lemmas[tid],
            candidates=rows[target_pk],
            normalise=lambda text, pos=pos: lemmatize(text, pos=pos).lower().strip(),  # type: ignore[misc]
        )
    # The scores in the order they were met: the oracle ranks ties in that order.
    assert {tid: list(target.scores.items()) for tid, target in gold.targets.items()} == {
        tid: list(target.scores.items()) for tid, target in reference.items()
    }
    rankings = {tid: sorted(t.scores, key=lambda text: -t.scores[text]) for tid, t in reference.items()}
    return metrics.evaluate(gold=reference, rankings=rankings).as_dict()


def _without_wordnet(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every candidate text WordNet is asked to lemmatise (the targets' own words aside)."""
    asked: list[str] = []
    real = wordnet_module._files

    class Recording:
        def morphy(self, form: str, pos: str) -> list[str]:
            asked.append(form)
            return real().morphy(form, pos)

    monkeypatch.setattr(wordnet_module, "_files", Recording)
    monkeypatch.setattr(wordnet_module, "_LEMMAS", {})
    return asked


targets_strategy = st.lists(
    st.tuples(
        st.sampled_from(POS),
        st.lists(
            st.tuples(st.sampled_from(WORDS), st.text(alphabet="ARU", min_size=1, max_size=5)),
            min_size=1,
            max_size=8,
            unique_by=lambda row: row[0].strip().casefold(),
        ),
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(targets=targets_strategy, stored=st.sets(st.sampled_from(WORDS)), stored_pos=st.sampled_from(POS))
def test_the_evaluation_with_stored_lemmas_equals_lemmatising_every_candidate_in_the_request(
    targets: list[tuple[str, list[tuple[str, str]]]], stored: set[str], stored_pos: str, monkeypatch: Any
) -> None:
    # Some texts stored already for one part of speech (by another benchmark), others not at all.
    Lemma.objects.all().delete()
    for text in sorted(stored):
        Lemma.objects.create(text=text, **{lemma_column(stored_pos): lemmatize(text, pos=stored_pos)})
    benchmark = labelled_benchmark(
        f"lemmas-{next(_names)}",
        [("sat", pos, [(text, ["fixture"], labels) for text, labels in candidates]) for pos, candidates in targets],
    )
    evaluator = SwordsEvaluator()
    first = evaluator.oracle(benchmark, EvaluationOptions())
    assert first == _today(benchmark)
    # Every candidate's lemma is stored now, for its target's part of speech: a second read asks
    # WordNet for none of them.
    for text, pos in Candidate.objects.filter(target__benchmark=benchmark).values_list("text", "target__pos"):
        assert getattr(Lemma.objects.get(text=text), lemma_column(pos)) == lemmatize(text, pos=pos)
    asked = _without_wordnet(monkeypatch)
    gold = BenchmarkGold(benchmark)
    targets_words = set(Target.objects.filter(benchmark=benchmark).values_list("word", flat=True))
    assert set(asked) <= targets_words
    assert metrics.evaluate(gold=gold.targets, rankings=gold.oracle_rankings()).as_dict() == first
    monkeypatch.undo()


@pytest.mark.parametrize(
    "scheme_settings",
    [
        {},
        {"stopping_policy": "adaptive", "adaptive_prior": "beta", "adaptive_score": "expected"},
    ],
)
def test_every_way_of_reading_the_counts_evaluates_with_the_stored_lemmas(
    scheme_settings: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The published counts from the tallies, an adaptive benchmark's expected ones (which read the
    sources), and a version's counted from the labels: each alike with lemmas stored or not."""
    rows = [
        ("ran", "verb", [("running", ["a"], "AAR"), ("runs", ["b"], "AR"), ("sprinted", ["a"], "RRA")]),
        ("houses", "noun", [("homes", ["a"], "AAA"), ("home", ["b"], "ARR"), ("house", ["a"], "AA")]),
        ("better", "adj", [("best", ["a"], "AR"), ("good", ["b"], "AAR"), ("finer", ["a"], "A")]),
    ]
    benchmark = labelled_benchmark(f"ways-{next(_names)}", rows)
    benchmark.scheme_settings = scheme_settings
    benchmark.save(update_fields=["scheme_settings"])
    version = benchmark_version_now(benchmark=benchmark)
    evaluator = SwordsEvaluator()
    for _ in range(2):  # lemmas stored by the first read, read by the second
        whole = BenchmarkGold(benchmark)
        of_version = BenchmarkGold(benchmark, version=version)
        assert of_version.targets == whole.targets
        assert (
            evaluator.oracle(benchmark, EvaluationOptions(version=version))
            == metrics.evaluate(gold=whole.targets, rankings=whole.oracle_rankings()).as_dict()
        )
    if not scheme_settings:
        assert evaluator.oracle(benchmark, EvaluationOptions()) == _today(benchmark)
        assert _today(benchmark, version) == evaluator.oracle(benchmark, EvaluationOptions(version=version))
    asked = _without_wordnet(monkeypatch)
    BenchmarkGold(benchmark, version=version)
    assert set(asked) <= {"ran", "houses", "better"}, "the candidates' lemmas were read, not looked up"


def test_candidates_from_every_path_and_an_edited_text_are_read_with_their_own_lemma(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nothing that creates candidates stores a lemma: a proposal, an import or a text changed since
    are read by their text, so each is evaluated with the lemma of the text it has now."""
    benchmark = labelled_benchmark(
        f"paths-{next(_names)}", [("ran", "verb", [("running", ["a"], "AAR"), ("walked", ["a"], "AR")])]
    )
    evaluator = SwordsEvaluator()
    assert evaluator.oracle(benchmark, EvaluationOptions()) == _today(benchmark)
    target = Target.objects.get(benchmark=benchmark)
    candidates_propose(
        target_id=target.pk,
        benchmark_id=target.benchmark_id,
        proposals=[("jogged", "proposal"), ("sprints", "proposal")],
    )
    for candidate in Candidate.objects.filter(target=target, text__in=["jogged", "sprints"]):
        CandidateTally.objects.create(candidate=candidate, accepts=1, rejects=1, labels=2)
    edited = Candidate.objects.get(target=target, text="walked")
    edited.text = "strolls"
    edited.save(update_fields=["text"])
    _today(benchmark)  # the gold read now equals WordNet's, in order
    asked = _without_wordnet(monkeypatch)
    gold = BenchmarkGold(benchmark)
    assert set(asked) <= {"ran"}
    (only,) = gold.targets.values()
    assert set(only.scores) == {"jog", "sprint", "stroll"}
