"""The activity log's one writer: every service that imports, creates, closes, publishes, approves,
rejects, bonuses, blocks, changes a setting or exports calls ``activity_record`` (re-exported by
``annotation.services``). A module of its own so that the importers, which ``annotation.services``
re-exports, can call it too without an import circle."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from annotation.changes import benchmark_changed
from annotation.models import Activity, ActivityKind, Benchmark


def activity_record(
    *,
    benchmark: Benchmark | int,
    kind: str,
    summary: str,
    by: Any = None,
    result: Mapping[str, Any] | None = None,
    target_ids: Iterable[int] | None = None,
) -> Activity:
    """Write one entry of the benchmark's activity log (``kind``: an ``ActivityKind``).

    Called by the service that did the operation, after it succeeded and inside its transaction
    when it has one, so an operation rolled back leaves no entry. ``by`` is the account that asked
    (an anonymous user or None: the platform itself). ``result`` must be JSON-serialisable.
    ``target_ids``: the only targets whose figures the operation may move, as ``benchmark_changed``
    takes them (None: any; empty: none, for an operation that changes no figure, a download).
    """
    if kind not in ActivityKind.values:
        raise ValueError(f"unknown activity kind {kind!r}")
    actor = by if by is not None and getattr(by, "pk", None) is not None else None
    benchmark_id = benchmark if isinstance(benchmark, int) else benchmark.pk
    # Whatever the log records, a researcher's page may show: the benchmark's change key moves.
    benchmark_changed(benchmark_id=benchmark_id, target_ids=target_ids)
    return Activity.objects.create(
        benchmark_id=benchmark_id,
        kind=kind,
        actor=actor,
        actor_name=actor.get_username() if actor is not None else "",
        summary=summary[:500],
        result=dict(result or {}),
    )
