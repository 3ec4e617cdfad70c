"""Which workers a researcher may see and act on (docs/permissions.md).

A worker belongs to no benchmark: the same person works in many. A researcher sees a worker who has
an assignment or a label in a benchmark they may see, and acts on them (block, unblock, block on the
crowd) with the role ``need`` in one of those benchmarks. A block is global, like the crowd's own
block (an MTurk block holds for the whole requester account): the worker is offered no HIT of any
benchmark. Anyone else's worker answers 404.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef, QuerySet
from django.http import Http404

from annotation.access import Role, benchmarks_visible_to
from annotation.models import Benchmark, Label, Worker
from annotation.roles import is_researcher
from hits.models import Assignment


def workers_visible_to(user: Any, need: Role = Role.VIEWER, *, benchmark: Benchmark | None = None) -> QuerySet[Worker]:
    """Workers with work in a benchmark where ``user`` has at least ``need`` (in ``benchmark`` alone if given)."""
    if not is_researcher(user):
        return Worker.objects.none()
    if benchmark is not None:
        benchmarks = benchmarks_visible_to(user, need).filter(pk=benchmark.pk)
    elif user.is_superuser:
        return Worker.objects.all()
    else:
        benchmarks = benchmarks_visible_to(user, need)
    worked = Assignment.objects.filter(worker=OuterRef("pk"), hit__batch__benchmark__in=benchmarks)
    labelled = Label.objects.filter(worker=OuterRef("pk"), candidate__target__benchmark__in=benchmarks)
    return Worker.objects.filter(Exists(worked) | Exists(labelled))


def worker_for(user: Any, worker_id: int, need: Role = Role.VIEWER, *, benchmark: Benchmark | None = None) -> Worker:
    """The worker, if the user has ``need`` in a benchmark the worker worked in (in ``benchmark`` if
    given): 404 when the user sees none of the worker's benchmarks, 403 when their role is too small."""
    worker = workers_visible_to(user, Role.VIEWER, benchmark=benchmark).filter(pk=worker_id).first()
    if worker is None:
        raise Http404("No such worker.")
    if need > Role.VIEWER and not workers_visible_to(user, need, benchmark=benchmark).filter(pk=worker_id).exists():
        raise PermissionDenied(f"This needs the {need.label} role in a benchmark this worker worked in.")
    return worker


def settings_role(state: Any, reward: Any) -> Role:
    """The role a change of a benchmark's collection settings needs: the reward decides what a crowd
    costs, so changing it is the owners'; the seed and the scheme's settings are the editors'.
    ``state`` is the current ``SettingsState``, ``reward`` the value asked for (None: not given). A
    value that is not a number cannot be compared: owners only, and the service refuses it anyway."""
    if reward is None:
        return Role.EDITOR
    try:
        unchanged = Decimal(str(reward)) == state.reward
    except (InvalidOperation, ValueError):
        unchanged = False
    return Role.EDITOR if unchanged else Role.OWNER


def budget_cap_role(state: Any, cap: Any) -> Role:
    """The role a change of the budget cap needs (docs/design.md §16): it decides what the crowds may
    be paid, so the owners', as the reward; giving the current cap (or none) needs an editor."""
    if cap is None:
        return Role.EDITOR
    if isinstance(cap, str) and not cap.strip():
        return Role.EDITOR if state.budget_cap is None else Role.OWNER
    try:
        unchanged = Decimal(str(cap)) == state.budget_cap
    except (InvalidOperation, ValueError):
        unchanged = False
    return Role.EDITOR if unchanged else Role.OWNER
