from django.contrib import admin

from analysis.models import ExportJob
from annotation.admin import BenchmarkScopedAdmin


@admin.register(ExportJob)
class ExportJobAdmin(BenchmarkScopedAdmin):
    list_display = ["id", "benchmark", "format", "status", "progress", "created_at", "finished_at"]
    list_filter = ["status", "format"]
