"""Writes on benchmarks and workers. One function per domain operation (docs/conventions.md, "Services and selectors").

Importing and removing an import live in :mod:`annotation.importers` (a package: three formats,
one writer) and are re-exported here, so every entry point imports ``annotation.services.benchmark_import``
and ``annotation.services.import_delete``.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction

from annotation.access import benchmark_owned_by
from annotation.activity import activity_record
from annotation.changes import site_changed
from annotation.demo import DEMO_ACCOUNTS, DEMO_BENCHMARK, DEMO_FILE, DEMO_TITLE, DemoAccount
from annotation.importers import (
    EntityCounts,
    IdMismatch,
    ImportFailed,
    ImportRemoval,
    ImportRemovalRefused,
    ImportReport,
    LabelOverlap,
    benchmark_import,
    import_delete,
)
from annotation.importers.records import CEFR_LEVELS
from annotation.importers.sources import CANDIDATE_SOURCES, SOURCE_NAMES, candidates_add
from annotation.llm import ModelReport, ModelRequest
from annotation.models import (
    ActivityKind,
    Benchmark,
    Candidate,
    Target,
    Worker,
    WorkerKind,
    default_scheme,
    normalize_candidate,
)
from annotation.roles import ensure_groups

__all__ = [
    "CANDIDATE_SOURCES",
    "SOURCE_NAMES",
    "DemoLoad",
    "EntityCounts",
    "IdMismatch",
    "ImportFailed",
    "ImportRemoval",
    "ImportRemovalRefused",
    "ImportReport",
    "LabelOverlap",
    "ModelReport",
    "ModelRequest",
    "activity_record",
    "benchmark_create",
    "benchmark_import",
    "candidates_add",
    "candidates_propose",
    "cefr_level_set",
    "demo_load",
    "import_delete",
    "worker_for_user",
    "workers_by_username",
]


def worker_for_user(*, user: User) -> Worker:
    """The local worker row of an account, created on first use.

    A worker already loaded with the account (API token authentication joins it) is used as is.
    """
    try:
        return user.worker  # type: ignore[no-any-return]
    except Worker.DoesNotExist:
        pass
    worker, _ = Worker.objects.get_or_create(
        user=user, defaults={"kind": WorkerKind.LOCAL, "external_id": user.get_username()}
    )
    return worker


def workers_by_username(*, usernames: list[str]) -> list[Worker]:
    """The local workers of these accounts, in the order named (created on first use); an unknown
    account is a ``ValueError`` naming it."""
    users = {user.get_username(): user for user in User.objects.filter(username__in=usernames, is_active=True)}
    unknown = [name for name in usernames if name not in users]
    if unknown:
        raise ValueError(f"no active account named {', '.join(map(repr, unknown))}")
    return [worker_for_user(user=users[name]) for name in usernames]


def cefr_level_set(*, target: Target, level: str, candidate: Candidate | None = None) -> Target | Candidate:
    """The researcher's CEFR level (A1 to C2) for a target, or for one of its candidates; "" clears it,
    so the level is again the imported one or the estimate (ProLex's proficiency rule reads it)."""
    level = level.strip().upper()
    if level and level not in CEFR_LEVELS:
        raise ValueError(f"unknown CEFR level {level!r} (use {', '.join(CEFR_LEVELS)}, or nothing to clear it)")
    if candidate is not None and candidate.target_id != target.pk:
        raise ValueError(f"candidate {candidate.pk} is not a candidate of target {target.pk}")
    row: Target | Candidate = candidate if candidate is not None else target
    row.cefr = level
    row.save(update_fields=["cefr"])
    return row


def candidates_propose(*, target_id: int, benchmark_id: int, proposals: Sequence[tuple[str, str]]) -> None:
    """Add (text, source) proposals to a target's candidates: a new text becomes a candidate, one
    the target has already (after normalisation) gains the source (docs/design.md §2). The caller
    names the target's benchmark, which a new candidate carries (docs/design.md §7, "Candidates by
    benchmark"; on PostgreSQL a wrong one is refused at the commit).

    Concurrency: proposals of the same text racing each other meet on the unique (target,
    normalized) constraint, which the insert skips over; the sources are then merged under the
    candidates' row locks, so no source is lost.
    """
    wanted: dict[str, tuple[str, set[str]]] = {}
    for text, source in proposals:
        key = normalize_candidate(text)
        if key:
            wanted.setdefault(key, (" ".join(text.split()), set()))[1].add(source)
    with transaction.atomic():
        Candidate.objects.bulk_create(
            [
                Candidate(
                    target_id=target_id, benchmark_id=benchmark_id, text=text, normalized=key, sources=sorted(sources)
                )
                for key, (text, sources) in wanted.items()
            ],
            ignore_conflicts=True,
        )
        for candidate in Candidate.objects.select_for_update().filter(target_id=target_id, normalized__in=wanted):
            merged = sorted(set(candidate.sources) | wanted[candidate.normalized][1])
            if merged != candidate.sources:
                candidate.sources = merged
                candidate.save(update_fields=["sources"])


def benchmark_create(
    *,
    name: str,
    title: str = "",
    description: str = "",
    scheme: str | None = None,
    created_by: User | None = None,
) -> Benchmark:
    """A new, empty benchmark with the default settings of docs/design.md §2. The name must be a free slug
    (validated by ``full_clean``; the unique constraint is the final word on a race)."""
    benchmark = Benchmark(
        name=name, title=title, description=description, scheme=scheme or default_scheme(), created_by=created_by
    )
    benchmark.full_clean()
    with transaction.atomic():
        benchmark.save()
        # A researcher's benchmark is theirs; a command's (no user) stays shared (docs/permissions.md).
        benchmark_owned_by(benchmark=benchmark, user=created_by)
        activity_record(
            benchmark=benchmark,
            kind=ActivityKind.BENCHMARK_CREATED,
            summary=f"benchmark {benchmark.name} ({benchmark.get_scheme_display()}) created",
            by=created_by,
            result={"scheme": benchmark.scheme},
        )
    return benchmark


@dataclass
class DemoLoad:
    report: ImportReport
    accounts: list[tuple[DemoAccount, bool]]  # (account, created now)


def demo_load() -> DemoLoad:
    """Groups, the ``demo`` benchmark and the demo accounts, each with a local worker. Idempotent:
    a second run creates nothing, and an existing account keeps its password."""
    with transaction.atomic():
        researchers, annotators = ensure_groups()
        report = benchmark_import(path_or_file=DEMO_FILE, benchmark_name=DEMO_BENCHMARK, origin=DEMO_FILE.name)
        if Benchmark.objects.filter(name=DEMO_BENCHMARK, title="").update(title=DEMO_TITLE):
            site_changed()  # the benchmarks' list shows the title (a queryset update sends no signal)
        accounts = []
        for account in DEMO_ACCOUNTS:
            user, created = User.objects.get_or_create(username=account.username)
            if created:
                user.set_password(account.password)
            # The researcher is also a superuser so the Django admin works in the demo.
            user.is_staff = user.is_superuser = account.researcher
            user.save()
            user.groups.add(researchers if account.researcher else annotators)
            worker_for_user(user=user)
            accounts.append((account, created))
    return DemoLoad(report=report, accounts=accounts)
