from collections import Counter
from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from annotation.access import Role
from annotation.admin import CHOICES, BenchmarkScopedAdmin, BenchmarkScopedInline
from annotation.models import Worker
from hits import services
from hits.access import workers_visible_to
from hits.models import (
    HIT,
    Answer,
    Assignment,
    AssignmentTelemetry,
    Batch,
    HITFlag,
    HITItem,
    Mitigations,
    Pledge,
)
from hits.qualification import admin as qualification_admin  # noqa: F401  (registers the test's admin)

# A researcher picks, as a foreign key, workers who worked in a benchmark where they may change things.
CHOICES[Worker] = workers_visible_to


@admin.register(Batch)
class BatchAdmin(BenchmarkScopedAdmin):
    list_display = ["id", "benchmark", "step", "backend", "status", "assignments_per_hit", "reward", "created_at"]
    list_filter = ["backend", "status", "step", "benchmark"]
    # The crowd's own actions (publish, sync, expire) are added by crowds.admin.
    actions = ["close_batches", "reopen_batches"]
    # The task design is checked where it is changed: its page and API (hits.design).
    readonly_fields = ["external", "sync_lease_until", "design"]

    @admin.action(description="Close the selected batches (no more HITs offered)")
    def close_batches(self, request: HttpRequest, queryset: QuerySet[Batch]) -> None:
        left: Counter[str] = Counter()
        closed = 0
        for batch in self.rows_for(request, queryset, Role.EDITOR):
            if services.batch_close(batch=batch, by=request.user):
                closed += 1
            else:
                left["already closed"] += 1
        self.report(request, closed, "{count} batch(es) closed.", left)

    @admin.action(description="Reopen the selected batches")
    def reopen_batches(self, request: HttpRequest, queryset: QuerySet[Batch]) -> None:
        left: Counter[str] = Counter()
        reopened = 0
        for batch in self.rows_for(request, queryset, Role.EDITOR):
            try:
                if services.batch_reopen(batch=batch, by=request.user):
                    reopened += 1
                else:
                    left["not closed"] += 1
            except services.BatchStateError as error:
                self.message_user(request, str(error), messages.ERROR)
        self.report(request, reopened, "{count} batch(es) reopened.", left)


class HITItemInline(BenchmarkScopedInline):
    model = HITItem
    fields = ["position", "kind", "text", "candidate"]
    raw_id_fields = ["candidate"]
    extra = 0


@admin.register(HIT)
class HITAdmin(BenchmarkScopedAdmin):
    list_display = ["id", "batch", "target", "part", "assignments_active", "assignments_required", "external_id"]
    list_filter = ["batch"]
    raw_id_fields = ["batch", "target"]
    inlines = [HITItemInline]


class AnswerInline(BenchmarkScopedInline):
    model = Answer
    fields = ["item", "value"]
    raw_id_fields = ["item"]
    extra = 0


@admin.register(Assignment)
class AssignmentAdmin(BenchmarkScopedAdmin):
    list_display = [
        "id",
        "hit",
        "worker",
        "status",
        "filtered",
        "external_id",
        "external_status",
        "external_unknown",
        "claimed_at",
        "submitted_at",
        "seconds_on_page",
    ]
    list_filter = ["status", "filtered", "external_unknown", "hit__batch__backend"]
    search_fields = ["external_id", "worker__external_id"]
    raw_id_fields = ["hit", "worker"]
    inlines = [AnswerInline]


@admin.register(HITFlag)
class HITFlagAdmin(BenchmarkScopedAdmin):
    list_display = ["id", "assignment", "item", "reason", "note", "created_at"]
    list_filter = ["reason", "assignment__hit__batch__benchmark"]
    raw_id_fields = ["assignment", "item"]


@admin.register(Mitigations)
class MitigationsAdmin(BenchmarkScopedAdmin):
    list_display = ["benchmark", "pledge", "block_copy_paste", "notice"]


@admin.register(Pledge)
class PledgeAdmin(BenchmarkScopedAdmin):
    list_display = ["worker", "benchmark", "assignment", "created_at"]
    list_filter = ["benchmark"]
    readonly_fields = ["worker", "benchmark", "assignment", "text", "created_at"]

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False  # a pledge is made on the HIT page, with an assignment


@admin.register(AssignmentTelemetry)
class AssignmentTelemetryAdmin(BenchmarkScopedAdmin):
    """Read-only: what the page sent, as it was checked and stored."""

    list_display = ["assignment", "received_at"]
    readonly_fields = ["assignment", "data", "received_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
