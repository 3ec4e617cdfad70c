"""Moving a target, a context or a candidate in the admin (docs/design.md §2, "Moving rows between
benchmarks"), for a benchmark of every scheme: a row holding collected work (HITs, labels) stays,
with the reason on the form and nothing changed in either benchmark's figures, tallies or exports;
a row nothing else names moves with its candidates, and both benchmarks' figures, read from their
cache before, show it at once."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.db.models import F, Sum
from django.test import Client
from django.urls import reverse

from analysis.exports import DATASET, STATS, export_formats, export_pieces
from annotation.changes import benchmark_changed
from annotation.models import Benchmark, Candidate, CandidateTally, Context, Label, Target, WorkerTally
from annotation.moves import MoveRefused, target_move
from annotation.selectors import benchmark_counts
from hits.models import HIT
from tests.base import Cast
from tests.scheme_benchmarks import BENCHMARK_SCHEMES, scheme_benchmark

pytestmark = pytest.mark.django_db

NEW_TEXT = "A dog slept by the door all night."


def _form_data(response: Any) -> dict[str, Any]:
    """What the admin's change page would post back unchanged: its form and its inlines' forms."""
    forms = [response.context["adminform"].form]
    for inline in response.context["inline_admin_formsets"]:
        forms += [inline.formset.management_form, *inline.formset.forms]
    data: dict[str, Any] = {}
    for form in forms:
        for field in form:
            value = field.value()
            if value is not None:
                data[field.html_name] = value
    return data


def _change(client: Client, row: Any, **changes: Any) -> Any:
    """Post the row's admin change page with ``changes``."""
    name = type(row)._meta.model_name
    url = reverse(f"admin:annotation_{name}_change", args=[row.pk])
    page = client.get(url)
    assert page.status_code == 200
    return client.post(url, {**_form_data(page), **changes})


def _refusal(page: Any) -> str:
    """The errors the admin's change page answered with (it must have refused the change)."""
    assert page.status_code == 200, page.status_code
    return str(page.context["adminform"].form.errors)


def _state(benchmark: Benchmark) -> dict[str, Any]:
    """What a researcher reads of the benchmark: its cached counts, its rows' copies of it, its
    tallies and every export that streams."""
    exports = {
        chosen.name: "".join(export_pieces(benchmark=benchmark, format=chosen.name, statistics=lambda workers: {}))
        for chosen in export_formats(benchmark)
        if chosen.name not in (DATASET, STATS)
    }
    return {
        "counts": benchmark_counts(benchmark=benchmark),
        "candidates": set(Candidate.objects.filter(benchmark=benchmark).values_list("pk", flat=True)),
        "labels": set(Label.objects.filter(benchmark=benchmark).values_list("pk", flat=True)),
        "tallied": CandidateTally.objects.filter(candidate__benchmark=benchmark).aggregate(n=Sum("labels"))["n"] or 0,
        "worker tallies": WorkerTally.objects.filter(benchmark=benchmark).aggregate(n=Sum("labels"))["n"] or 0,
        "exports": exports,
    }


def _fresh_target(benchmark: Benchmark, context: Context) -> Target:
    """A target nothing but its candidates names (none for Smart Word Suggestions, whose item is the sentence)."""
    if benchmark.scheme == "sws":
        target = context.targets.create(benchmark=benchmark, word=context.text, offset=0, pos="")
    else:
        target = context.targets.create(benchmark=benchmark, word="dog", offset=context.text.index("dog"), pos="noun")
        for word in ("hound", "pup"):
            Candidate.objects.create(target=target, text=word, sources=["thesaurus"])
    # As the import or admin page that adds it would: the benchmark's figures are computed anew.
    benchmark_changed(benchmark_id=benchmark.pk)
    return target


def _misplaced() -> int:
    return (
        Candidate.objects.exclude(benchmark_id=F("target__benchmark_id")).count()
        + Label.objects.exclude(benchmark_id=F("candidate__benchmark_id")).count()
    )


@pytest.mark.parametrize("scheme", BENCHMARK_SCHEMES)
def test_a_row_with_collected_work_stays_and_one_without_moves_with_both_benchmarks_recounted(
    scheme: str, cast: Cast, root: Client
) -> None:
    first, _ = scheme_benchmark(scheme, cast)
    second, _ = scheme_benchmark(scheme, cast)
    worked = Target.objects.filter(benchmark=first, hits__assignments__labels__isnull=False).first() or (
        Target.objects.filter(benchmark=first, hits__isnull=False).first()
    )
    assert worked is not None
    # A context of the other benchmark to move it to.
    their_context = Context.objects.create(benchmark=second, text=f"{worked.context.text} Once more.")
    benchmark_changed(benchmark_id=second.pk)
    before = {benchmark.pk: _state(benchmark) for benchmark in (first, second)}
    assert before[first.pk]["exports"]

    # A target with HITs (and labels where the scheme judges candidates), its context, and one of its
    # candidates each stay where they are: the form names the reason, nothing is written.
    refused = _refusal(_change(root, worked, benchmark=second.pk, context=their_context.pk))
    assert "It cannot move" in refused and "HIT" in refused, refused
    assert "It cannot move" in _refusal(_change(root, worked.context, benchmark=second.pk))
    judged = Candidate.objects.filter(target=worked).first()
    if judged is not None:
        elsewhere = Target.objects.filter(benchmark=first).exclude(pk=worked.pk).first()
        assert elsewhere is not None
        assert "It cannot move" in _refusal(_change(root, judged, target=elsewhere.pk))
    unchanged = {benchmark.pk: _state(benchmark) for benchmark in (first, second)}
    for pk in unchanged:
        for key in unchanged[pk]:
            assert unchanged[pk][key] == before[pk][key], (pk, key)

    # A target added since, which nothing but its candidates names, moves to a context of the other
    # benchmark; its candidates follow, and the counts both benchmarks cached before show it.
    mine = Context.objects.create(benchmark=first, text=NEW_TEXT)
    theirs = Context.objects.create(benchmark=second, text=NEW_TEXT)
    fresh = _fresh_target(first, mine)
    carried = set(Candidate.objects.filter(target=fresh).values_list("pk", flat=True))
    before = {benchmark.pk: _state(benchmark) for benchmark in (first, second)}
    assert "not one of the target" in _refusal(_change(root, fresh, benchmark=second.pk))
    page = _change(root, fresh, benchmark=second.pk, context=theirs.pk)
    assert page.status_code == 302, page.content.decode()[:2000]
    after = {benchmark.pk: _state(benchmark) for benchmark in (first, second)}
    assert after[first.pk]["counts"]["targets"] == before[first.pk]["counts"]["targets"] - 1
    assert after[second.pk]["counts"]["targets"] == before[second.pk]["counts"]["targets"] + 1
    for key in ("candidates",):
        assert after[first.pk][key] == before[first.pk][key] - carried
        assert after[second.pk][key] == before[second.pk][key] | carried
    for benchmark in (first, second):
        # No label lost, moved or counted twice.
        for key in ("labels", "tallied", "worker tallies"):
            assert after[benchmark.pk][key] == before[benchmark.pk][key]
        assert after[benchmark.pk]["counts"]["labels"] == before[benchmark.pk]["counts"]["labels"]
    assert after[first.pk]["counts"]["candidates"] == before[first.pk]["counts"]["candidates"] - len(carried)
    assert after[second.pk]["counts"]["candidates"] == before[second.pk]["counts"]["candidates"] + len(carried)

    # Its context (now without targets) and a new one with a target move back with their targets.
    assert "has this text already" in _refusal(_change(root, Context.objects.get(pk=mine.pk), benchmark=second.pk))
    moving = Context.objects.create(benchmark=second, text=NEW_TEXT.replace("door", "gate"))
    back = _fresh_target(second, moving)
    page = _change(root, moving, benchmark=first.pk)
    assert page.status_code == 302, page.content.decode()[:2000]
    assert Target.objects.get(pk=back.pk).benchmark_id == first.pk
    assert benchmark_counts(benchmark=first)["targets"] == after[first.pk]["counts"]["targets"] + 1
    assert _misplaced() == 0
    # The deferred foreign keys checked now, as the commit would.
    connection.check_constraints()


def test_a_candidate_without_labels_moves_to_another_target_and_both_benchmarks_recount(
    cast: Cast, root: Client
) -> None:
    first, _ = scheme_benchmark("swords", cast)
    second, _ = scheme_benchmark("swords", cast)
    target = _fresh_target(first, Context.objects.create(benchmark=first, text=NEW_TEXT))
    other = Target.objects.filter(benchmark=second).first()
    candidate = Candidate.objects.filter(target=target).first()
    assert other is not None and candidate is not None
    counts = {benchmark.pk: benchmark_counts(benchmark=benchmark)["candidates"] for benchmark in (first, second)}
    page = _change(root, candidate, target=other.pk)
    assert page.status_code == 302, page.content.decode()[:2000]
    assert Candidate.objects.get(pk=candidate.pk).benchmark_id == second.pk
    assert benchmark_counts(benchmark=first)["candidates"] == counts[first.pk] - 1
    assert benchmark_counts(benchmark=second)["candidates"] == counts[second.pk] + 1


def test_a_move_checks_again_under_its_locks(cast: Cast) -> None:
    """The service refuses a move the form let through when work came in between."""
    first, _ = scheme_benchmark("swords", cast)
    second, _ = scheme_benchmark("swords", cast)
    mine = Context.objects.create(benchmark=first, text=NEW_TEXT)
    theirs = Context.objects.create(benchmark=second, text=NEW_TEXT)
    target = _fresh_target(first, mine)
    batch = first.batches.first()
    assert batch is not None
    HIT.objects.create(batch=batch, target=target, part=0, assignments_required=1)
    target.benchmark, target.context = second, theirs
    with pytest.raises(MoveRefused, match="HITs"):
        target_move(target=target)
    assert Target.objects.get(pk=target.pk).benchmark_id == first.pk
