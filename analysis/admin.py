from django.contrib import admin

from analysis.models import ExportJob


@admin.register(ExportJob)
class ExportJobAdmin(admin.ModelAdmin):
    list_display = ["id", "benchmark", "format", "status", "progress", "created_at", "finished_at"]
    list_filter = ["status", "format"]
