from django.contrib import admin

from annotation.models import Benchmark, Candidate, Context, Label, Target, Worker


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
