"""The generation task's proposals on a benchmark whose scheme runs it (a step naming it): per
target, the lemmas annotators proposed with their votes, and how many said none comes to mind
(``schemes.swords.proposals.rules``). Each lemma is also a candidate of the target with the source
``crowd`` (made when the answer was submitted), so the statistics count them in their
``crowd-only`` source group.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from analysis.figures import register_pages
from annotation.access import Role, benchmark_for
from annotation.models import Benchmark, Target
from crowdlex.kept_pages import BY_NAME, kept_page
from crowdlex.pagination import PaginatedList
from crowdlex.permissions import IsResearcher, researcher_required
from hits.selectors import structured_answers
from schemes import get_scheme
from schemes.swords.proposals import GENERATION, PROPOSE
from schemes.swords.proposals.rules import Proposals, merge_proposals


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


def runs_generation(benchmark: Benchmark) -> bool:
    """Whether the benchmark's scheme has a step that the generation task runs (``Step.scheme``)."""
    return any(step.scheme == GENERATION.name for step in get_scheme(benchmark).steps)


def _not_proposing(benchmark: Benchmark) -> str | None:
    """Why the benchmark has no proposals to show, or None when its scheme runs the generation task."""
    if runs_generation(benchmark):
        return None
    return f"{benchmark.name} is a {benchmark.get_scheme_display()} benchmark: no step of it is the generation task"


# --- the proposals: a page and its API ------------------------------------------------------

TARGETS_PER_PAGE = 50


@researcher_required
def proposals_page(request: HttpRequest, name: str) -> HttpResponse:
    """What annotators proposed in the generation task, target by target, a page at a time."""
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    if (problem := _not_proposing(benchmark)) is not None:
        raise Http404(problem)
    found = target_proposals(benchmark=benchmark)
    page = Paginator(found, TARGETS_PER_PAGE).get_page(request.GET.get("page"))
    context = {"benchmark": benchmark, "targets": page.object_list, "page": page}
    return render(request, "schemes/generation/proposals.html", context)


class TargetProposalsSerializer(serializers.Serializer[Any]):
    target_id = serializers.IntegerField()
    word = serializers.CharField()
    pos = serializers.CharField()
    proposers = serializers.IntegerField(source="proposals.proposers")
    none = serializers.IntegerField(source="proposals.none", help_text="annotators to whom none came to mind")
    votes = serializers.DictField(
        child=serializers.IntegerField(), source="proposals.votes", help_text="lemma -> annotators who proposed it"
    )


class ProposalsApi(PaginatedList, APIView):
    """What annotators proposed in the generation task of a benchmark whose scheme runs it, by target."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=TargetProposalsSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.VIEWER)
        if (problem := _not_proposing(benchmark)) is not None:
            raise NotFound(problem)
        return self.paginated(request, target_proposals(benchmark=benchmark), TargetProposalsSerializer)


register_pages(
    pages=[
        path(
            "benchmarks/<slug:name>/proposals/", kept_page(benchmark=BY_NAME)(proposals_page), name="analysis-proposals"
        )
    ],
    api=[path("benchmarks/<slug:name>/proposals", ProposalsApi.as_view(), name="api-benchmark-proposals")],
)
