from collections import Counter

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from annotation.access import Role
from annotation.admin import BenchmarkScopedAdmin
from hits.services.workers import AUTO_BLOCK_PREFIX
from review.models import ReviewSettings, WorkerFlag
from review.services import worker_block, worker_flag_clear


@admin.register(WorkerFlag)
class WorkerFlagAdmin(BenchmarkScopedAdmin):
    list_display = ["worker", "benchmark", "reason", "created_at", "cleared_at"]
    list_filter = ["reason", "benchmark"]
    raw_id_fields = ["worker"]
    readonly_fields = ["cleared_at", "cleared_by"]
    actions = ["clear_flags", "block_workers"]

    @admin.action(description="Clear the selected flags (their workers' work counts again)")
    def clear_flags(self, request: HttpRequest, queryset: QuerySet[WorkerFlag]) -> None:
        left: Counter[str] = Counter()
        cleared = 0
        for flag in self.rows_for(request, queryset, Role.EDITOR):
            if flag.cleared_at is not None:
                left["already cleared"] += 1
                continue
            worker_flag_clear(flag=flag, by=request.user)  # type: ignore[arg-type]
            cleared += 1
        self.report(request, cleared, "{count} flag(s) cleared; their benchmarks are being refreshed.", left)

    @admin.action(description="Block the workers of the selected flags")
    def block_workers(self, request: HttpRequest, queryset: QuerySet[WorkerFlag]) -> None:
        left: Counter[str] = Counter()
        blocked = 0
        seen: set[int] = set()
        for flag in self.rows_for(request, queryset, Role.EDITOR).select_related("worker", "benchmark"):
            if flag.worker_id in seen:
                continue
            seen.add(flag.worker_id)
            worker = flag.worker
            if worker.blocked and not worker.blocked_reason.startswith(AUTO_BLOCK_PREFIX):
                left["worker already blocked"] += 1
                continue
            reason = f"{flag.get_reason_display()} in benchmark {flag.benchmark.name}"
            worker_block(worker=worker, reason=reason, by=request.user)  # type: ignore[arg-type]
            blocked += 1
        self.report(
            request, blocked, "{count} worker(s) blocked: no more HITs, and their labels no longer count.", left
        )


@admin.register(ReviewSettings)
class ReviewSettingsAdmin(BenchmarkScopedAdmin):
    list_display = ["benchmark", "auto_block_spammers", "auto_block_signals", "updated_at"]
    readonly_fields = ["updated_at", "updated_by"]
