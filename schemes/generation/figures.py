"""The generation task's proposals on a SWORDS benchmark: per target, the lemmas annotators
proposed with their votes, and how many said none comes to mind (``schemes.generation.rules``).
Each lemma is also a candidate of the target with the source ``crowd`` (made when the answer was
submitted), so the statistics count them in their ``crowd-only`` source group.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from analysis.exports import ExportFormat, ExportRequest, csv_pieces, register_export_format
from annotation.models import Benchmark, Target
from hits.selectors import structured_answers
from schemes.generation import PROPOSE
from schemes.generation.rules import Proposals, merge_proposals

PROPOSAL_COLUMNS = ("target_id", "target", "pos", "proposers", "none", "proposal", "votes")


@dataclass(frozen=True)
class TargetProposals:
    target_id: int
    word: str
    pos: str
    context: str
    proposals: Proposals


def target_proposals(*, benchmark: Benchmark) -> list[TargetProposals]:
    """Targets with valid answers to the generation task, by target, their proposals merged."""
    answers: dict[int, list[tuple[int, list[str], bool]]] = defaultdict(list)
    for target_id, _, worker_id, data in structured_answers(benchmark=benchmark, kind_prefix=PROPOSE):
        answers[target_id].append((worker_id, data["lemmas"], data["none"]))
    targets = Target.objects.filter(pk__in=answers).order_by("pk").values_list("pk", "word", "pos", "context__text")
    return [
        TargetProposals(target_id=pk, word=word, pos=pos, context=text, proposals=merge_proposals(answers[pk]))
        for pk, word, pos, text in targets
    ]


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
        schemes=frozenset({"swords"}),
    )
)
