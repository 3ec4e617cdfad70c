"""The crowds' part of the admin: their rows (postings, bonuses, spending limits) and the crowd's own
actions on batches (publish, sync, expire) and assignments (approve, reject), added to hits' admin."""

from collections import Counter
from collections.abc import Callable
from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse

from annotation.access import Role, visible
from annotation.admin import BenchmarkScopedAdmin
from crowdlex.confirm import confirmed
from crowds import services as crowd
from crowds.confirmations import batches_expire_confirmation
from crowds.interface import BackendError
from hits.admin import AssignmentAdmin, BatchAdmin
from hits.models import Assignment, AssignmentStatus, Batch, Bonus, BonusStatus, CrowdLimits, RemoteHIT


def _each(
    model_admin: BenchmarkScopedAdmin,
    request: HttpRequest,
    rows: QuerySet[Any],
    operation: Callable[[Any], object],
    left: Counter[str] | None = None,
    unchanged: Callable[[Any], str | None] = lambda row: None,
) -> int:
    """Run one service per selected row and count the rows it changed. A row ``unchanged`` names a
    reason for is counted in ``left`` and not touched; a refusal or the crowd's error is shown and
    the rest go on."""
    done = 0
    for row in rows:
        reason = unchanged(row)
        if reason is not None:
            if left is not None:
                left[reason] += 1
            continue
        try:
            operation(row)
        except (BackendError, crowd.CrowdActionRefused) as error:
            model_admin.message_user(request, f"{row}: {error}", messages.ERROR)
        else:
            done += 1
    return done


class CrowdBatchAdmin(BatchAdmin):
    actions = [*BatchAdmin.actions, "publish_batches", "sync_batches", "expire_batches"]

    @admin.action(
        description="Publish the selected batches to their crowd (MTurk: the MTURK_SANDBOX endpoint; "
        "Prolific: the batch's estimated time, 1 minute unless set)"
    )
    def publish_batches(self, request: HttpRequest, queryset: QuerySet[Batch]) -> None:
        rows = self.rows_for(request, queryset, Role.OWNER)
        done = _each(self, request, rows, lambda batch: crowd.batch_publish(batch=batch, by=request.user))
        self.report(request, done, "{count} batch(es) published.")

    @admin.action(description="Sync the selected batches with their crowd (reconcile, review, re-collect)")
    def sync_batches(self, request: HttpRequest, queryset: QuerySet[Batch]) -> None:
        for batch in self.rows_for(request, queryset, Role.OWNER):
            try:
                report = crowd.batch_sync(batch=batch)
            except (BackendError, crowd.CrowdActionRefused) as error:
                self.message_user(request, f"{batch}: {error}", messages.ERROR)
            else:
                self.message_user(request, report.summary(), messages.WARNING if report.errors else messages.SUCCESS)

    @admin.action(description="Expire the selected batches' HITs on their crowd now and close them")
    def expire_batches(self, request: HttpRequest, queryset: QuerySet[Batch]) -> HttpResponse | None:
        if not confirmed(request):
            batches = list(visible(request.user, queryset, Role.EDITOR).order_by("id"))
            return batches_expire_confirmation(request, batches=batches, cancel_url=request.get_full_path())
        rows = self.rows_for(request, queryset, Role.EDITOR)
        done = _each(self, request, rows, lambda batch: crowd.batch_expire(batch=batch, by=request.user))
        self.report(request, done, "{count} batch(es) expired.")
        return None


class CrowdAssignmentAdmin(AssignmentAdmin):
    actions = ["approve_assignments", "reject_assignments"]

    @admin.action(description="Approve the selected submitted assignments (MTurk or Prolific pays them)")
    def approve_assignments(self, request: HttpRequest, queryset: QuerySet[Assignment]) -> None:
        rows = self.rows_for(request, queryset, Role.OWNER)
        left: Counter[str] = Counter()
        done = _each(
            self,
            request,
            rows,
            lambda assignment: crowd.assignment_approve(assignment=assignment, by=request.user),
            left,
            lambda assignment: "already approved" if assignment.status == AssignmentStatus.APPROVED else None,
        )
        self.report(request, done, "{count} assignment(s) approved.", left)

    @admin.action(description="Reject the selected submitted assignments with the batch's message")
    def reject_assignments(self, request: HttpRequest, queryset: QuerySet[Assignment]) -> None:
        rows = self.rows_for(request, queryset, Role.EDITOR)
        left: Counter[str] = Counter()
        done = _each(
            self,
            request,
            rows,
            lambda assignment: crowd.assignment_reject(assignment=assignment, by=request.user),
            left,
            lambda assignment: "already rejected" if assignment.status == AssignmentStatus.REJECTED else None,
        )
        self.report(request, done, "{count} assignment(s) rejected; their HITs will be re-collected.", left)


admin.site.unregister(Batch)
admin.site.register(Batch, CrowdBatchAdmin)
admin.site.unregister(Assignment)
admin.site.register(Assignment, CrowdAssignmentAdmin)


@admin.register(RemoteHIT)
class RemoteHITAdmin(BenchmarkScopedAdmin):
    list_display = ["external_id", "hit", "round", "max_assignments", "extensions", "created_at", "expired_at"]
    list_filter = ["hit__batch"]
    raw_id_fields = ["hit"]
    search_fields = ["external_id"]


@admin.register(Bonus)
class BonusAdmin(BenchmarkScopedAdmin):
    change_role = Role.OWNER
    list_display = ["id", "worker", "assignment", "amount", "status", "created_at", "sent_at"]
    list_filter = ["status"]
    raw_id_fields = ["assignment", "worker", "created_by"]
    # external_id and pay_requested_at: Prolific's bulk bonus payment and when it was asked to pay it.
    readonly_fields = ["token", "status", "error", "sent_at", "external_id", "pay_requested_at"]
    actions = ["send_again"]

    @admin.action(description="Send the selected pending bonuses again (same token: paid at most once)")
    def send_again(self, request: HttpRequest, queryset: QuerySet[Bonus]) -> None:
        left: Counter[str] = Counter()
        sent = 0
        for bonus in self.rows_for(request, queryset, Role.OWNER):
            was = bonus.status
            after = crowd.bonus_send(bonus=bonus)
            if after.status == BonusStatus.SENT and was != BonusStatus.SENT:
                sent += 1
            elif was != BonusStatus.PENDING:
                left[f"not pending ({BonusStatus(was).label})"] += 1
            else:
                left[f"the crowd did not pay it ({after.error[:200] or after.status})"] += 1
        self.report(request, sent, "{count} bonus(es) sent.", left)


@admin.register(CrowdLimits)
class CrowdLimitsAdmin(BenchmarkScopedAdmin):
    change_role = Role.OWNER
    list_display = ["benchmark", "bonus_limit_rewards", "recollection_budget"]
