from django.contrib import admin

from analysis.models import ExportJob, WorkerFlag


@admin.register(WorkerFlag)
class WorkerFlagAdmin(admin.ModelAdmin):
    list_display = ["worker", "benchmark", "reason", "created_at", "cleared_at"]
    list_filter = ["reason", "benchmark"]
    raw_id_fields = ["worker"]


@admin.register(ExportJob)
class ExportJobAdmin(admin.ModelAdmin):
    list_display = ["id", "benchmark", "format", "status", "progress", "created_at", "finished_at"]
    list_filter = ["status", "format"]
