from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from annotation.access import Role
from annotation.admin import BenchmarkScopedAdmin
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
        for flag in self.rows_for(request, queryset, Role.EDITOR).filter(cleared_at__isnull=True):
            worker_flag_clear(flag=flag, by=request.user)  # type: ignore[arg-type]
        messages.success(request, "Flags cleared; the benchmarks are being refreshed.")

    @admin.action(description="Block the workers of the selected flags")
    def block_workers(self, request: HttpRequest, queryset: QuerySet[WorkerFlag]) -> None:
        for flag in self.rows_for(request, queryset, Role.EDITOR).select_related("worker", "benchmark"):
            reason = f"{flag.get_reason_display()} in benchmark {flag.benchmark.name}"
            worker_block(worker=flag.worker, reason=reason, by=request.user)  # type: ignore[arg-type]
        messages.success(request, "Workers blocked: no more HITs, and their labels no longer count.")


@admin.register(ReviewSettings)
class ReviewSettingsAdmin(BenchmarkScopedAdmin):
    list_display = ["benchmark", "auto_block_spammers", "auto_block_signals", "updated_at"]
    readonly_fields = ["updated_at", "updated_by"]
