"""The toy scheme's export format, a plug-in of the analysis room: one CSV row per sentence with
the answers it got."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from analysis.exports import ExportFormat, ExportRequest, csv_pieces, register_export_format
from annotation.models import Benchmark
from hits.models import Answer, AssignmentStatus
from tests.schemes.toy import TOY

COLUMNS = ("target_id", "sentence", "yes", "no")


def rows(benchmark: Benchmark) -> Iterator[tuple[Any, ...]]:
    answers = Answer.objects.filter(
        assignment__hit__batch__benchmark=benchmark, assignment__status=AssignmentStatus.SUBMITTED
    ).values_list("item__hit__target_id", "value")
    by_target: dict[int, dict[str, int]] = {}
    for target_id, value in answers:
        counts = by_target.setdefault(target_id, {"yes": 0, "no": 0})
        counts[value] += 1
    for target_id, text in benchmark.targets.order_by("pk").values_list("pk", "context__text"):
        counts = by_target.get(target_id, {"yes": 0, "no": 0})
        yield target_id, text, counts["yes"], counts["no"]


def _pieces(request: ExportRequest) -> Iterator[str]:
    return csv_pieces(COLUMNS, rows(request.benchmark), request.counter)


register_export_format(
    ExportFormat("toy-answers-csv", ".csv", "answers per sentence (CSV)", _pieces, schemes=frozenset({TOY}))
)
