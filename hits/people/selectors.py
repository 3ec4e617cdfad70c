"""Reads of people management: the annotators' accounts and who is active (docs/people.md)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Max, Q, QuerySet
from django.http import Http404
from django.utils import timezone

from annotation.access import Role, benchmarks_visible_to
from annotation.models import Worker
from annotation.roles import ANNOTATORS
from hits.access import workers_visible_to
from hits.models import AssignmentStatus, Batch, BatchStatus


def annotator_accounts() -> QuerySet[User]:
    """Every annotator's account a researcher manages (neither staff nor superuser)."""
    return User.objects.filter(groups__name=ANNOTATORS, is_staff=False, is_superuser=False)


def people_activity(*, viewer: Any, query: str = "") -> QuerySet[User]:
    """Annotators' accounts, the most recently active first, each with ``last_seen`` (their last
    sign-in, claim or submission), ``submitted_day`` and ``submitted_week`` (HITs submitted in the
    last 24 hours and 7 days) and ``submitted_total``. Work counts only in the benchmarks
    ``viewer`` may see; ``query`` matches the username, e-mail or name."""
    now = timezone.now()
    benchmarks = benchmarks_visible_to(viewer)
    mine = Q(worker__assignments__hit__batch__benchmark__in=benchmarks)
    submitted = (
        mine
        & Q(worker__assignments__submitted_at__isnull=False)
        & ~Q(worker__assignments__status=AssignmentStatus.RETURNED)
    )
    rows = annotator_accounts().select_related("worker")
    query = query.strip()
    if query:
        rows = rows.filter(Q(username__icontains=query) | Q(email__icontains=query) | Q(first_name__icontains=query))
    return rows.annotate(
        last_claim=Max("worker__assignments__claimed_at", filter=mine),
        submitted_total=Count("worker__assignments", filter=submitted),
        submitted_day=Count(
            "worker__assignments", filter=submitted & Q(worker__assignments__submitted_at__gte=now - timedelta(days=1))
        ),
        submitted_week=Count(
            "worker__assignments", filter=submitted & Q(worker__assignments__submitted_at__gte=now - timedelta(days=7))
        ),
    ).order_by("-last_login", "username")


def last_seen(row: User) -> Any:
    """The later of an account's last sign-in and last claim (annotations of ``people_activity``)."""
    seen = [moment for moment in (row.last_login, getattr(row, "last_claim", None)) if moment is not None]
    return max(seen) if seen else None


def batches_to_name(*, viewer: Any) -> QuerySet[Batch]:
    """The open batches of named annotators a researcher may add people to (editor's role)."""
    return (
        Batch.objects.filter(
            benchmark__in=benchmarks_visible_to(viewer, Role.EDITOR), status=BatchStatus.OPEN, hits__reserved=True
        )
        .select_related("benchmark")
        .distinct()
        .order_by("-pk")
    )


def person_for(viewer: Any, person_id: int, *, act: bool = False) -> User:
    """The annotator's account ``person_id`` (404 for any other account, researchers' included).

    Any researcher reads it. To act on it (a sign-in link, a reset) once it has signed in, the
    researcher needs the editor's role in a benchmark it has worked in (docs/permissions.md), as a
    block does: a link signs in as that person. An account that never signed in is nobody's yet."""
    person = annotator_accounts().select_related("worker").filter(pk=person_id).first()
    if person is None:
        raise Http404("No such annotator.")
    if act and person.last_login is not None and not viewer.is_superuser:
        worker = Worker.objects.filter(user=person).first()
        if worker is None or not workers_visible_to(viewer, Role.EDITOR).filter(pk=worker.pk).exists():
            raise PermissionDenied(
                "Only a researcher with the editor's role in a benchmark this person worked in may send them a link."
            )
    return person
