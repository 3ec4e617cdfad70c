"""The qualification test in the Django admin: to look things up. Tests are built by
``qualification_build`` (command, API) so that every build follows the same rules; only the
``active`` switch is edited here. Researchers see the tests and attempts of their benchmarks; editors
switch a test and reset an attempt (delete it) as on the pages (docs/permissions.md)."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from annotation.admin import BenchmarkScopedAdmin, BenchmarkScopedInline
from hits.qualification.models import QualificationAttempt, QualificationItem, QualificationTest


class QualificationItemInline(BenchmarkScopedInline):
    model = QualificationItem
    fields = ["position", "context", "word", "offset", "candidate", "expected", "source_score"]
    readonly_fields = ["position", "context", "word", "offset", "candidate", "expected", "source_score"]
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(QualificationTest)
class QualificationTestAdmin(BenchmarkScopedAdmin):
    list_display = ["benchmark", "active", "length", "pass_mark", "source", "created_at"]
    list_filter = ["active"]
    fields = ["benchmark", "active", "length", "pass_mark", "seed", "source", "crowd_types", "created_by"]
    readonly_fields = ["benchmark", "length", "pass_mark", "seed", "source", "crowd_types", "created_by"]
    inlines = [QualificationItemInline]

    def has_add_permission(self, request: HttpRequest, *args: object) -> bool:
        return False


@admin.register(QualificationAttempt)
class QualificationAttemptAdmin(BenchmarkScopedAdmin):
    list_display = ["worker", "test", "passed", "correct", "total", "started_at", "submitted_at"]
    list_filter = ["passed", "test__benchmark"]
    search_fields = ["worker__external_id"]
    readonly_fields = [
        "test",
        "worker",
        "items",
        "answers",
        "correct",
        "total",
        "passed",
        "started_at",
        "submitted_at",
        "granted_on",
    ]

    def has_add_permission(self, request: HttpRequest, *args: object) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
