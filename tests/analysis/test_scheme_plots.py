"""ProLex's and Smart Word Suggestions' plots: each renders valid SVG with the expected series for a
small benchmark, on the statistics page and as a plot file; an empty benchmark gives an explanatory
empty chart, never an error."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from collections import Counter
from pathlib import Path

import pytest
from django.test import Client

from annotation.models import Benchmark
from annotation.services import benchmark_import
from hits.models import HITItem
from hits.services import assignment_claim_next, assignment_submit, hits_generate
from schemes.prolex.figures import levels_chart
from schemes.prolex.formats import ProlexRow
from tests.base import PASSWORD, Cast
from tests.hits.factories import make_benchmark
from tests.hits.submitted_work import SWS_SENTENCE, prolex_work, sws_target

pytestmark = pytest.mark.django_db

SVG = "{http://www.w3.org/2000/svg}"
FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "sws_small.json"


def _bars(svg: str) -> dict[str, str]:
    """Each bar's "series, bin" -> "share (n = count)", from the titles the SVG gives its bars."""
    root = ElementTree.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    bars = {}
    for rect in root.iter(f"{SVG}rect"):
        title = rect.find(f"{SVG}title")
        if title is not None and title.text:
            name, _, value = title.text.rpartition(": ")
            bars[name] = value
    return bars


def _plot(benchmark: Benchmark, plot: str) -> str:
    client = Client()
    client.login(username="rita", password=PASSWORD)
    response = client.get(f"/benchmarks/{benchmark.name}/plots/{plot}.svg")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("image/svg+xml")
    return response.content.decode()


def _page(benchmark: Benchmark) -> str:
    client = Client()
    client.login(username="rita", password=PASSWORD)
    response = client.get(f"/benchmarks/{benchmark.name}/statistics/")
    assert response.status_code == 200
    return response.content.decode()


def test_prolex_judgments_plot_shows_the_share_of_1_minus_1_and_0(cast: Cast) -> None:
    benchmark, _ = prolex_work(cast)
    # Two experts: 1 twice, -1 four times, 0 twice (tests/hits/submitted_work.py).
    assert _bars(_plot(benchmark, "judgments")) == {
        "collected here, 1 acceptable": "25.0% (n = 2)",
        "collected here, -1 unacceptable": "50.0% (n = 4)",
        "collected here, 0 uncertain": "25.0% (n = 2)",
    }
    page = _page(benchmark)
    assert 'data-plot="judgments"' in page and 'data-plot="levels"' in page
    assert "/plots/levels.png" in page


def test_prolex_levels_plot_places_acceptable_substitutes_against_the_target() -> None:
    rows = [
        ProlexRow("go", "**go**", ["a", "b", "c", "d"], ["x"], ["a", "b", "c"], ["d"], 3, [3, 4, "None"], [1]),
        # Without level columns: a proficiency-oriented substitute has no level known, another is below.
        ProlexRow("run", "**run**", ["e", "f"], [], ["e"], ["f"]),
        # A word no list knows (6) has no level.
        ProlexRow("sit", "**sit**", ["g"], [], ["g"], [], 2, [6], []),
    ]
    assert _bars(levels_chart(rows)) == {
        "acceptable substitutes, below the target": "28.6% (n = 2)",
        "acceptable substitutes, the target's level": "14.3% (n = 1)",
        "acceptable substitutes, above the target": "14.3% (n = 1)",
        "acceptable substitutes, no level known": "42.9% (n = 3)",
    }


def test_prolex_plots_of_an_empty_benchmark_say_why_they_are_empty(cast: Cast) -> None:
    benchmark = make_benchmark("px-empty", scheme="prolex")
    for plot, note in (("judgments", "No judgment yet"), ("levels", "No acceptable substitute yet")):
        svg = _plot(benchmark, plot)
        assert _bars(svg) == {} and note in svg
    assert "No judgment yet" in _page(benchmark)


def _share_bars(origin: str, counts: Counter[int], top: int, first: int) -> dict[str, str]:
    """The bars the plot must draw for ``counts`` of values, binned ``first``..``top``+."""
    binned: Counter[int] = Counter()
    for value, count in counts.items():
        binned[min(value, top)] += count
    total = sum(binned.values())
    names = {value: f"{value}+" if value == top else str(value) for value in range(first, top + 1)}
    return {
        f"{origin}, {names[value]}": f"{100 * binned[value] / total:.1f}% (n = {binned[value]})"
        for value in range(first, top + 1)
    }


def _collect_one_sentence(cast: Cast, tmp_path: Path) -> Benchmark:
    """The fixture's sentences, and one more marked here by three annotators: two targets merge."""
    benchmark_import(path_or_file=FIXTURE, benchmark_name="sws-plots", fmt="sws")
    extra = tmp_path / "more.json"
    extra.write_text(json.dumps({"n-1": {"sentence": SWS_SENTENCE, "substitutes": []}}))
    benchmark_import(path_or_file=extra, benchmark_name="sws-plots", fmt="sws")
    benchmark = Benchmark.objects.get(name="sws-plots")
    benchmark.scheme_settings = {"min_targets": 2}
    benchmark.save()
    sentence = benchmark.targets.get(context__external_id="n-1")
    hits_generate(benchmark=benchmark, step=1, seed=1, targets=[sentence])
    work = {
        cast.alice: [
            sws_target("very good", "excellent; great", "refine-usage"),
            sws_target("quick", "fast", "refine-usage"),
        ],
        cast.bob: [
            sws_target("very good", "Excellent", "diversify-expression"),
            sws_target("results", "outcomes", "refine-usage"),
        ],
        cast.carol: [
            sws_target("very good", "superb", "diversify-expression"),
            sws_target("quick", "rapid; fast", "refine-usage"),
        ],
    }
    for user, targets in work.items():
        claim = assignment_claim_next(worker=user.worker)
        assert claim is not None
        item = HITItem.objects.get(hit=claim.hit)
        assignment_submit(assignment=claim, answers={item.pk: json.dumps({"targets": targets})})
    return benchmark


def test_sws_plots_show_targets_per_sentence_votes_per_suggestion_and_types(cast: Cast, tmp_path: Path) -> None:
    benchmark = _collect_one_sentence(cast, tmp_path)
    released = json.loads(FIXTURE.read_text())
    substitutes = [target for entry in released.values() for target in entry["substitutes"]]

    targets = _bars(_plot(benchmark, "targets"))
    # The released files' sentences with targets; the one sentence marked here merged two.
    per_sentence = Counter(len(entry["substitutes"]) for entry in released.values() if entry["substitutes"])
    assert targets == _share_bars("released", per_sentence, 10, 0) | _share_bars("collected", Counter({2: 1}), 10, 0)

    votes = _bars(_plot(benchmark, "votes"))
    released_votes = Counter(count for target in substitutes for count in target[1].values())
    # excellent 2, great 1, superb 1 on "very good"; fast 2, rapid 1 on "quick".
    assert votes == _share_bars("released", released_votes, 10, 1) | _share_bars(
        "collected", Counter({1: 3, 2: 2}), 10, 1
    )

    types = _bars(_plot(benchmark, "types"))
    codes = Counter(target[2] for target in substitutes)
    assert types == {
        "released, refine-usage": f"{100 * codes[1] / len(substitutes):.1f}% (n = {codes[1]})",
        "released, diversify-expression": f"{100 * codes[2] / len(substitutes):.1f}% (n = {codes[2]})",
        "collected, refine-usage": "50.0% (n = 1)",
        "collected, diversify-expression": "50.0% (n = 1)",
    }
    page = _page(benchmark)
    assert all(f'data-plot="{plot}"' in page for plot in ("targets", "votes", "types"))


def test_sws_plots_of_an_empty_benchmark_say_why_they_are_empty(cast: Cast) -> None:
    benchmark = make_benchmark("sws-empty", scheme="sws")
    for plot in ("targets", "votes", "types"):
        svg = _plot(benchmark, plot)
        assert _bars(svg) == {} and "No sentence has targets yet" in svg
    assert "No sentence has targets yet" in _page(benchmark)
