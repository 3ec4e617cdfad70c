from typing import Any

from django.contrib import admin

from annotation.models import Activity, Benchmark, Candidate, Context, Label, Target, Worker


@admin.register(Benchmark)
class BenchmarkAdmin(admin.ModelAdmin):
    list_display = ["name", "scheme", "scheme_settings", "reward", "created_at"]
    list_filter = ["scheme"]
    search_fields = ["name", "title"]


@admin.register(Context)
class ContextAdmin(admin.ModelAdmin):
    list_display = ["id", "benchmark", "short_text", "external_id"]
    list_filter = ["benchmark"]
    search_fields = ["text", "external_id"]
    readonly_fields = ["digest"]

    @admin.display(description="text")
    def short_text(self, obj: Context) -> str:
        return obj.text[:100]


class CandidateInline(admin.TabularInline):
    model = Candidate
    fields = ["text", "sources", "stage", "cefr", "external_id"]
    extra = 0
    show_change_link = True


@admin.register(Target)
class TargetAdmin(admin.ModelAdmin):
    list_display = ["id", "word", "pos", "lemma", "cefr", "benchmark", "stage"]
    list_filter = ["benchmark", "pos", "stage"]
    search_fields = ["word", "lemma", "external_id"]
    raw_id_fields = ["context"]
    inlines = [CandidateInline]


@admin.register(Candidate)
class CandidateAdmin(admin.ModelAdmin):
    list_display = ["id", "text", "target", "sources", "stage"]
    list_filter = ["stage", "target__benchmark"]
    search_fields = ["text", "target__word"]
    raw_id_fields = ["target"]
    readonly_fields = ["normalized"]


@admin.register(Worker)
class WorkerAdmin(admin.ModelAdmin):
    list_display = ["external_id", "kind", "user", "blocked", "created_at"]
    list_filter = ["kind", "blocked"]
    search_fields = ["external_id", "user__username"]


@admin.register(Label)
class LabelAdmin(admin.ModelAdmin):
    list_display = ["id", "candidate", "value", "step", "worker", "assignment", "origin", "position"]
    list_filter = ["value", "step"]
    raw_id_fields = ["candidate", "worker", "assignment"]


@admin.register(Activity)
class ActivityAdmin(admin.ModelAdmin):
    """The activity log, read-only: entries are written by the services that did the operations."""

    list_display = ["created_at", "benchmark", "kind", "actor_name", "summary"]
    list_filter = ["kind"]
    search_fields = ["summary", "actor_name", "benchmark__name"]

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False
