"""The admin of what is judged, and ``BenchmarkScopedAdmin``: the admin page of any model that hangs
off a benchmark, open to researchers who are not superusers for their benchmarks only
(docs/permissions.md)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Model, QuerySet
from django.forms import ModelChoiceField
from django.http import Http404, HttpRequest, HttpResponse

from annotation.access import (
    AccessRefused,
    Role,
    access_grant,
    access_revoke,
    benchmark_owned_by,
    benchmarks_visible_to,
    can_manage_access,
    role_of,
    visible,
)
from annotation.changes import benchmark_changed
from annotation.models import (
    Activity,
    Benchmark,
    BenchmarkMember,
    Candidate,
    Context,
    Label,
    Target,
    Worker,
    normalize_candidate,
)
from annotation.moves import (
    candidate_move,
    candidate_move_refusal,
    context_move,
    context_move_refusal,
    target_move,
    target_move_refusal,
)
from annotation.roles import RESEARCHERS, is_researcher
from annotation.tallies import tallies_labels_edited

# Choices of a foreign key to a model that does not hang off a benchmark (workers, accounts), for a
# researcher who is not a superuser: ``(user, need) -> queryset``. Apps above register theirs.
CHOICES: dict[type[Model], Callable[[Any, Role], QuerySet[Any]]] = {
    User: lambda user, need: (
        User.objects.filter(groups__name=RESEARCHERS, is_staff=True) | User.objects.filter(pk=user.pk)
    ),
    Worker: lambda user, need: Worker.objects.none(),
}


def _benchmark_id(obj: Model) -> int | None:
    """The benchmark a row hangs off, by its model's ``benchmark_path``."""
    path = type(obj).benchmark_path  # type: ignore[attr-defined]
    if not path:
        return obj.pk  # type: ignore[no-any-return]
    *hops, last = path.split("__")
    row: Any = obj
    for hop in hops:
        row = getattr(row, hop, None)
        if row is None:
            return None
    return getattr(row, f"{last}_id", None)


def _benchmarks_changed(benchmark_ids: list[int | None]) -> None:
    for benchmark_id in sorted({each for each in benchmark_ids if each is not None}):
        benchmark_changed(benchmark_id=benchmark_id)


class BenchmarkScopedAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """A researcher who is not a superuser sees the rows of the benchmarks they may see, changes
    (adds, deletes) those where their role reaches ``change_role``, and picks foreign keys among
    those alone; list filters offer only values their rows have, so no name leaks. Superusers are
    not limited. The model must say how it reaches its benchmark (``benchmark_path``)."""

    change_role: Role = Role.EDITOR

    def _limited(self, request: HttpRequest) -> bool:
        return not request.user.is_superuser

    def _role(self, request: HttpRequest, obj: Model) -> Role | None:
        benchmark_id = _benchmark_id(obj)
        return None if benchmark_id is None else role_of(request.user, benchmark_id)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return is_researcher(request.user)

    def _get_obj_does_not_exist_redirect(self, request: HttpRequest, opts: Any, object_id: str) -> HttpResponse:
        # The admin's answer to a missing row is a redirect to its index; a row of another's
        # benchmark is missing for them, and both answer 404 as on the rest of the site.
        raise Http404(f"No {opts.verbose_name} with id {object_id!r}.")

    def has_view_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        if not is_researcher(request.user):
            return False
        return obj is None or not self._limited(request) or self._role(request, obj) is not None

    def _may_change(self, request: HttpRequest, obj: Model | None) -> bool:
        if not is_researcher(request.user):
            return False
        if obj is None or not self._limited(request):
            return True
        role = self._role(request, obj)
        return role is not None and role >= self.change_role

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self._may_change(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self._may_change(request, obj)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return is_researcher(request.user)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        rows = super().get_queryset(request)
        return visible(request.user, rows) if self._limited(request) else rows

    # A row changed by hand may show on any page of its benchmark: its change key moves in the
    # admin's transaction, so the figures are computed again and no kept page is served again
    # (docs/design.md §7, "Kept pages"). Inline rows are saved in the same transaction as their parent.

    # False where the admin moves the key itself, naming the targets it changed (labels).
    moves_change_key = True

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if self.moves_change_key:
            _benchmarks_changed([_benchmark_id(obj)])

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        if self.moves_change_key and not isinstance(obj, Benchmark):
            _benchmarks_changed([_benchmark_id(obj)])
        super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        if self.moves_change_key and queryset.model is not Benchmark:
            # The benchmarks of every row in one statement, not a walk of each row's relations.
            path = queryset.model.benchmark_path
            _benchmarks_changed(list(queryset.order_by().values_list(path, flat=True).distinct()))
        super().delete_queryset(request, queryset)

    def get_list_filter(self, request: HttpRequest) -> Any:
        found = super().get_list_filter(request)
        if not self._limited(request):
            return found
        # A filter on a relation lists every related row of the table; only those of visible rows here.
        return [
            (name, admin.RelatedOnlyFieldListFilter) if isinstance(name, str) and self._is_relation(name) else name
            for name in found
        ]

    def _is_relation(self, lookup: str) -> bool:
        model: Any = self.model
        field: Any = None
        for part in lookup.split("__"):
            field = model._meta.get_field(part)
            model = field.related_model
            if model is None:
                return False
        return field is not None and field.is_relation

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if isinstance(field, ModelChoiceField) and self._limited(request):
            field.queryset = self.choices(request, db_field.related_model)
        return field

    def choices(self, request: HttpRequest, model: type[Model]) -> QuerySet[Any]:
        """The rows of ``model`` a researcher may point a foreign key at: those of benchmarks where
        they may change things, or what ``CHOICES`` says for models outside benchmarks."""
        if model is Benchmark:
            return benchmarks_visible_to(request.user, self.change_role)
        if hasattr(model, "benchmark_path"):
            return visible(request.user, model._default_manager.all(), self.change_role)
        if model in CHOICES:
            return CHOICES[model](request.user, self.change_role)
        return model._default_manager.none()

    def rows_for(self, request: HttpRequest, queryset: QuerySet[Any], need: Role) -> QuerySet[Any]:
        """The selected rows an action may touch with role ``need``; the others are named and left."""
        allowed = visible(request.user, queryset, need)
        skipped = queryset.count() - allowed.count()
        if skipped:
            self.message_user(
                request, f"{skipped} row(s) left alone: this needs the {need.label} role.", messages.WARNING
            )
        return allowed

    def report(self, request: HttpRequest, done: int, changed: str, left: Counter[str] | None = None) -> None:
        """What an action really changed: ``done`` rows ``changed`` (a success only if there are any),
        then each reason some rows were left as they were, with their count."""
        self.message_user(request, changed.format(count=done), messages.SUCCESS if done else messages.WARNING)
        for reason, count in sorted((left or Counter()).items()):
            self.message_user(request, f"{count} left as they were: {reason}.", messages.WARNING)


class BenchmarkScopedInline(admin.TabularInline):  # type: ignore[type-arg]
    """Rows shown inside their parent's page: seen with it, changed with ``change_role`` in its benchmark."""

    change_role: Role = Role.EDITOR

    def _may_change(self, request: HttpRequest, obj: Any) -> bool:
        if request.user.is_superuser:
            return True
        benchmark_id = None if obj is None else _benchmark_id(obj)
        role = None if benchmark_id is None else role_of(request.user, benchmark_id)
        return role is not None and role >= self.change_role

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_researcher(request.user)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._may_change(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._may_change(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._may_change(request, obj)


class MemberInline(admin.TabularInline):  # type: ignore[type-arg]
    """Who has which role: owners (a superuser, on a benchmark nobody owns) change it, through the
    same services as the access page, so the last owner cannot leave."""

    model = BenchmarkMember
    fk_name = "benchmark"
    fields = ["user", "role", "granted_by", "granted_at"]
    readonly_fields = ["granted_by", "granted_at"]
    extra = 0

    def _owner(self, request: HttpRequest, obj: Any) -> bool:
        return request.user.is_superuser or (obj is not None and can_manage_access(request.user, obj))

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._owner(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._owner(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._owner(request, obj)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_researcher(request.user)

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if db_field.name == "user" and isinstance(field, ModelChoiceField):
            field.queryset = User.objects.filter(groups__name=RESEARCHERS, is_staff=True) | User.objects.filter(
                is_superuser=True
            )
        return field


@admin.register(Benchmark)
class BenchmarkAdmin(BenchmarkScopedAdmin):
    """Settings such as the reward decide what a crowd costs: owners change them."""

    change_role = Role.OWNER
    list_display = ["name", "scheme", "scheme_settings", "reward", "created_at"]
    list_filter = ["scheme"]
    search_fields = ["name", "title"]
    inlines = [MemberInline]

    def save_model(self, request: HttpRequest, obj: Benchmark, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if not change:
            benchmark_owned_by(benchmark=obj, user=request.user)

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        if formset.model is not BenchmarkMember:
            super().save_formset(request, form, formset, change)
            return
        members = formset.save(commit=False)
        try:
            # Owners first: a shared benchmark takes other roles only once it has an owner.
            for member in sorted(members, key=lambda row: -row.role):
                access_grant(benchmark=form.instance, user=member.user, role=Role(member.role), by=request.user)
            for gone in formset.deleted_objects:
                access_revoke(benchmark=form.instance, user=gone.user)
        except AccessRefused as exc:
            self.message_user(request, str(exc), messages.ERROR)


class MoveCheckedForm(forms.ModelForm):  # type: ignore[type-arg]
    """The admin's form of a row that a change of ``move_field`` moves to another benchmark or target
    (docs/design.md §2, "Moving rows between benchmarks"): a move the row's data forbids is named on
    the field, before anything is saved."""

    move_field = ""

    def move_refusal(self, row: Any) -> str | None:
        raise NotImplementedError

    def _post_clean(self) -> None:
        super()._post_clean()  # type: ignore[misc]
        if self.instance.pk is None or self.errors or self.move_field not in self.changed_data:
            return
        refusal = self.move_refusal(self.instance)
        if refusal:
            self.add_error(self.move_field, f"It cannot move: {refusal}.")


class ContextForm(MoveCheckedForm):
    move_field = "benchmark"

    def move_refusal(self, row: Any) -> str | None:
        return context_move_refusal(context=row)


class TargetForm(MoveCheckedForm):
    move_field = "benchmark"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None and not self.instance.pos and "pos" in self.fields:
            # A target stored without a part of speech (a Smart Word Suggestions sentence) stays so.
            self.fields["pos"].required = False

    def move_refusal(self, row: Any) -> str | None:
        return target_move_refusal(target=row)


class CandidateForm(MoveCheckedForm):
    """A candidate's text is unique per target up to case and spaces (the ``normalized`` column, which
    the form does not hold, so Django's own check of the constraint leaves it out): a text that
    another candidate of the target already has is named on the field, where saving it would fail
    on the database's constraint. A change of target is checked by its move (``move_refusal``)."""

    move_field = "target"

    def move_refusal(self, row: Any) -> str | None:
        return candidate_move_refusal(candidate=row)

    def _post_clean(self) -> None:
        super()._post_clean()
        row = self.instance
        moved = row.pk is not None and "target" in self.changed_data
        if self.errors or moved or row.target_id is None:
            return
        clash = (
            Candidate.objects.filter(target_id=row.target_id, normalized=normalize_candidate(row.text))
            .exclude(pk=row.pk)
            .first()
        )
        if clash is not None:
            self.add_error(
                "text",
                f"The target already has the candidate “{clash.text}” (id {clash.pk}); candidates of a "
                "target differ by more than case and spaces.",
            )


@admin.register(Context)
class ContextAdmin(BenchmarkScopedAdmin):
    """Moving a context to another benchmark takes its targets and their candidates along."""

    form = ContextForm
    list_display = ["id", "benchmark", "short_text", "external_id"]
    list_filter = ["benchmark"]
    search_fields = ["text", "external_id"]
    readonly_fields = ["digest"]

    @admin.display(description="text")
    def short_text(self, obj: Context) -> str:
        return obj.text[:100]

    def save_model(self, request: HttpRequest, obj: Context, form: Any, change: bool) -> None:
        if change and "benchmark" in form.changed_data:
            context_move(context=obj)
            return
        super().save_model(request, obj, form, change)


class CandidateInline(BenchmarkScopedInline):
    model = Candidate
    fields = ["text", "sources", "stage", "cefr", "external_id"]
    extra = 0
    show_change_link = True


@admin.register(Target)
class TargetAdmin(BenchmarkScopedAdmin):
    list_display = ["id", "word", "pos", "lemma", "cefr", "benchmark", "stage"]
    list_filter = ["benchmark", "pos", "stage"]
    search_fields = ["word", "lemma", "external_id"]
    raw_id_fields = ["context"]
    inlines = [CandidateInline]
    form = TargetForm

    def save_model(self, request: HttpRequest, obj: Target, form: Any, change: bool) -> None:
        if change and "benchmark" in form.changed_data:
            target_move(target=obj)
            return
        super().save_model(request, obj, form, change)


@admin.register(Candidate)
class CandidateAdmin(BenchmarkScopedAdmin):
    list_display = ["id", "text", "target", "sources", "stage"]
    list_filter = ["stage", "target__benchmark"]
    search_fields = ["text", "target__word"]
    raw_id_fields = ["target"]
    readonly_fields = ["normalized"]
    form = CandidateForm

    def save_model(self, request: HttpRequest, obj: Candidate, form: Any, change: bool) -> None:
        if change and "target" in form.changed_data:
            candidate_move(candidate=obj)
            return
        super().save_model(request, obj, form, change)


@admin.register(Worker)
class WorkerAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """A worker belongs to no benchmark: superusers only here; researchers block and unblock on the
    benchmark's pages, which check that the worker worked in it."""

    list_display = ["external_id", "kind", "user", "blocked", "created_at"]
    list_filter = ["kind", "blocked"]
    search_fields = ["external_id", "user__username"]


@admin.register(Label)
class LabelAdmin(BenchmarkScopedAdmin):
    """Labels by hand. A label added, changed or deleted here moves what the platform keeps of its
    benchmark as a submit's or an import's would: the tallies of the candidates it judged before and
    after and of its worker (``annotation.tallies.tallies_labels_edited``), and the change key of each
    benchmark it left or joined, in the transaction of the edit (docs/design.md §7, "Tallies")."""

    list_display = ["id", "candidate", "value", "step", "worker", "assignment", "origin", "position"]
    list_filter = ["value", "step"]
    raw_id_fields = ["candidate", "worker", "assignment"]
    moves_change_key = False

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        with transaction.atomic():
            before = _label_rows(Label.objects.filter(pk=obj.pk)) if change else []
            super().save_model(request, obj, form, change)
            _labels_edited([*before, *_label_rows(Label.objects.filter(pk=obj.pk))])

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        with transaction.atomic():
            before = _label_rows(Label.objects.filter(pk=obj.pk))
            super().delete_model(request, obj)
            _labels_edited(before)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        with transaction.atomic():
            before = _label_rows(queryset)
            super().delete_queryset(request, queryset)
            _labels_edited(before)


def _label_rows(labels: QuerySet[Any]) -> list[tuple[int, int, int | None, int]]:
    """Each label's benchmark, candidate, worker and candidate's target."""
    return list(labels.values_list("benchmark_id", "candidate_id", "worker_id", "candidate__target_id"))


def _labels_edited(rows: list[tuple[int, int, int | None, int]]) -> None:
    """The tallies and change keys of the labels ``rows`` describe (before and after an edit)."""
    tallies_labels_edited(
        candidate_ids=[candidate for _, candidate, _, _ in rows],
        workers=[(benchmark, worker) for benchmark, _, worker, _ in rows if worker is not None],
    )
    targets: dict[int, set[int]] = {}
    for benchmark, _, _, target in rows:
        targets.setdefault(benchmark, set()).add(target)
    for benchmark, target_ids in sorted(targets.items()):
        benchmark_changed(benchmark_id=benchmark, target_ids=sorted(target_ids))


@admin.register(Activity)
class ActivityAdmin(BenchmarkScopedAdmin):
    """The activity log, read-only: entries are written by the services that did the operations.
    A researcher reads the log of the benchmarks they see; only a superuser removes entries."""

    list_display = ["created_at", "benchmark", "kind", "actor_name", "summary"]
    list_filter = ["kind"]
    search_fields = ["summary", "actor_name", "benchmark__name"]

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return bool(request.user.is_superuser)
