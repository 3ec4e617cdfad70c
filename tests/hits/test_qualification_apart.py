"""Test answers are stored apart: taking a qualification test changes no label, statistic, export or
spam decision of the benchmark (docs/design.md §9)."""

from __future__ import annotations

import io
import json

import pytest

from analysis.services.exports import benchmark_export
from annotation.models import Label
from hits.services import assignment_claim_next, assignment_submit
from review.models import WorkerFlag
from review.services import benchmark_refresh
from tests.base import Cast
from tests.hits.factories import honest_answers, make_benchmark, make_hits
from tests.hits.qualification_data import take, with_test

pytestmark = pytest.mark.django_db


def exported(benchmark: object) -> dict[str, object]:
    found: dict[str, object] = {}
    for format in ("labels-csv", "candidates-csv", "swords", "stats"):
        out = io.StringIO()
        benchmark_export(benchmark=benchmark, format=format, out=out)  # type: ignore[arg-type]
        found[format] = out.getvalue()
    stats = json.loads(str(found["stats"]))
    stats.pop("generated_at")
    found["stats"] = stats
    return found


def test_taking_the_test_changes_no_label_statistic_export_or_flag(cast: Cast) -> None:
    benchmark = make_benchmark()
    [hit, _] = make_hits(benchmark, 2)
    test = with_test(benchmark)
    take(test, cast.alice.worker)
    assignment = assignment_claim_next(worker=cast.alice.worker)
    assert assignment is not None and assignment.hit == hit
    assignment_submit(assignment=assignment, answers=honest_answers(hit))
    benchmark_refresh(benchmark=benchmark, full=True)
    labels, before, flags = Label.objects.count(), exported(benchmark), WorkerFlag.objects.count()

    # Everyone answers every test item; one of them wrongly throughout (like a spammer would).
    take(test, cast.bob.worker)
    take(test, cast.spammer.worker, wrong=6)
    take(test, cast.carol.worker, wrong=1)
    benchmark_refresh(benchmark=benchmark, full=True)

    assert Label.objects.count() == labels > 0
    assert exported(benchmark) == before
    assert WorkerFlag.objects.count() == flags
