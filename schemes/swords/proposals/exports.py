"""The generation task's proposals as an export format (CSV): one row per lemma a target's
annotators proposed, with its votes, on a benchmark whose scheme runs the task."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from analysis.exports import ExportFormat, ExportRequest, csv_pieces, register_export_format
from annotation.models import Benchmark
from schemes.swords.proposals.figures import runs_generation, target_proposals

PROPOSAL_COLUMNS = ("target_id", "target", "pos", "proposers", "none", "proposal", "votes")


def proposal_rows(*, benchmark: Benchmark) -> Iterator[tuple[Any, ...]]:
    """One row per proposed lemma (PROPOSAL_COLUMNS); a target whose annotators all had none has one empty row."""
    for target in target_proposals(benchmark=benchmark):
        found = target.proposals
        head = (target.target_id, target.word, target.pos, found.proposers, found.none)
        if not found.votes:
            yield (*head, "", 0)
        for proposal, votes in found.votes.items():
            yield (*head, proposal, votes)


def _pieces(request: ExportRequest) -> Iterator[str]:
    return csv_pieces(PROPOSAL_COLUMNS, proposal_rows(benchmark=request.benchmark), request.counter)


register_export_format(
    ExportFormat(
        "proposals-csv",
        ".csv",
        "proposals of the generation task (step 1), one row per lemma with its votes (CSV)",
        _pieces,
        when=runs_generation,
    )
)
