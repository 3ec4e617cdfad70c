"""Smart Word Suggestions' export formats (a plug-in of the analysis room, ``schemes.PLUGINS``): its
JSON release, sentence by sentence as the paper's file is written, and the merged suggestions as
CSV rows."""

from __future__ import annotations

import json
from collections.abc import Iterator

from analysis.exports import ExportFormat, ExportRequest, RowCounter, csv_pieces, register_export_format
from annotation.models import Context
from schemes.sws.figures import CSV_FORMAT, SUGGESTION_COLUMNS, SwsSentence, suggestion_rows, sws_sentences
from schemes.sws.formats import NAME


def release_pieces(sentences: Iterator[SwsSentence], counter: RowCounter) -> Iterator[str]:
    """What ``json.dumps(data, indent=4)`` writes for the whole release, one sentence at a time."""
    first = True
    for sentence in sentences:
        member = json.dumps({sentence.entry.id: sentence.entry.as_release()}, indent=4)[2:-2]
        yield ("{\n" if first else ",\n") + member
        counter.tick()
        first = False
    yield "{}" if first else "\n}"


register_export_format(
    ExportFormat(
        NAME,
        ".json",
        "Smart Word Suggestions JSON: sentences, tokens, targets with {suggestion: votes} and type",
        lambda request: release_pieces(sws_sentences(benchmark=request.benchmark), request.counter),
        lambda benchmark: Context.objects.filter(benchmark=benchmark).count(),
        schemes=frozenset({NAME}),
    )
)


def _csv(request: ExportRequest) -> Iterator[str]:
    return csv_pieces(SUGGESTION_COLUMNS, suggestion_rows(benchmark=request.benchmark), request.counter)


register_export_format(
    ExportFormat(
        CSV_FORMAT,
        ".csv",
        "suggestions, one row per suggestion with its votes, type and voting index (CSV)",
        _csv,
        schemes=frozenset({NAME}),
    )
)
