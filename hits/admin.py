from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from hits import services
from hits.models import HIT, Answer, Assignment, Batch, HITItem


@admin.register(Batch)
class BatchAdmin(admin.ModelAdmin):
    list_display = ["id", "benchmark", "step", "backend", "status", "assignments_per_hit", "reward", "created_at"]
    list_filter = ["backend", "status", "step", "benchmark"]
    actions = ["close_batches", "reopen_batches"]

    @admin.action(description="Close the selected batches (no more HITs offered)")
    def close_batches(self, request: HttpRequest, queryset: QuerySet[Batch]) -> None:
        closed = sum(services.batch_close(batch=batch) for batch in queryset)
        self.message_user(request, f"{closed} batch(es) closed.", messages.SUCCESS)

    @admin.action(description="Reopen the selected batches")
    def reopen_batches(self, request: HttpRequest, queryset: QuerySet[Batch]) -> None:
        reopened = 0
        for batch in queryset:
            try:
                reopened += services.batch_reopen(batch=batch)
            except services.BatchStateError as error:
                self.message_user(request, str(error), messages.ERROR)
        self.message_user(request, f"{reopened} batch(es) reopened.", messages.SUCCESS)


class HITItemInline(admin.TabularInline):
    model = HITItem
    fields = ["position", "kind", "text", "candidate"]
    raw_id_fields = ["candidate"]
    extra = 0


@admin.register(HIT)
class HITAdmin(admin.ModelAdmin):
    list_display = ["id", "batch", "target", "part", "assignments_active", "assignments_required", "external_id"]
    list_filter = ["batch"]
    raw_id_fields = ["batch", "target"]
    inlines = [HITItemInline]


class AnswerInline(admin.TabularInline):
    model = Answer
    fields = ["item", "value"]
    raw_id_fields = ["item"]
    extra = 0


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["id", "hit", "worker", "status", "filtered", "claimed_at", "submitted_at", "seconds_on_page"]
    list_filter = ["status", "filtered"]
    raw_id_fields = ["hit", "worker"]
    inlines = [AnswerInline]
