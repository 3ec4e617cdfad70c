from django.contrib import admin

from hits.models import HIT, Answer, Assignment, Batch, HITItem


@admin.register(Batch)
class BatchAdmin(admin.ModelAdmin):
    list_display = ["id", "benchmark", "step", "backend", "status", "assignments_per_hit", "reward", "created_at"]
    list_filter = ["backend", "status", "step", "benchmark"]


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
