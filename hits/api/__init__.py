"""REST API of the hits app: annotators' work queue, researchers' batches and crowd operations."""

from django.urls import URLPattern, URLResolver, path

from hits.api import operations, planning, researcher, settings, work
from hits.design import api as design
from hits.people import api as people
from hits.qualification import api as qualification

urlpatterns: list[URLPattern | URLResolver] = [
    path("work/claim", work.WorkClaimView.as_view(), name="api-work-claim"),
    path("work/assignments/", work.WorkHistoryView.as_view(), name="api-work-history"),
    path("work/projects/", work.WorkProjectsView.as_view(), name="api-work-projects"),
    path("work/assignments/<int:assignment_id>/submit", work.WorkSubmitView.as_view(), name="api-work-submit"),
    path("work/assignments/<int:assignment_id>/return", work.WorkReturnView.as_view(), name="api-work-return"),
    path("work/assignments/<int:assignment_id>/flag", work.WorkFlagView.as_view(), name="api-work-flag"),
    path("work/assignments/<int:assignment_id>/draft", work.WorkDraftView.as_view(), name="api-work-draft"),
    path("work/qualification/<slug:name>", qualification.WorkQualificationApi.as_view(), name="api-work-qualification"),
    path(
        "work/qualification/<slug:name>/submit",
        qualification.WorkQualificationSubmitApi.as_view(),
        name="api-work-qualification-submit",
    ),
]

# Researchers: a benchmark's qualification test (docs/qualification.md).
urlpatterns += [
    path("benchmarks/<slug:name>/qualification", qualification.QualificationApi.as_view(), name="api-qualification"),
    path(
        "benchmarks/<slug:name>/qualification/attempts",
        qualification.QualificationAttemptsApi.as_view(),
        name="api-qualification-attempts",
    ),
]

# Researchers: batches, HITs and assignments.
urlpatterns += [
    path("batches/", researcher.BatchListCreateView.as_view(), name="api-batch-list"),
    path("batches/preview/", planning.BatchPreviewApi.as_view(), name="api-batch-preview"),
    path("batches/<int:pk>/", researcher.BatchDetailView.as_view(), name="api-batch-detail"),
    path("batches/<int:pk>/clone/", planning.BatchCloneApi.as_view(), name="api-batch-clone"),
    path("batches/<int:pk>/close/", researcher.BatchCloseView.as_view(), name="api-batch-close"),
    path("batches/<int:pk>/hits/", researcher.BatchHITListView.as_view(), name="api-batch-hits"),
    path("hits/<int:pk>/", researcher.HITDetailView.as_view(), name="api-hit-detail"),
    path("assignments/", researcher.AssignmentListView.as_view(), name="api-assignment-list"),
    path("benchmarks/<slug:name>/settings/", settings.BenchmarkSettingsApi.as_view(), name="api-benchmark-settings"),
    path(
        "benchmarks/<slug:name>/assignments",
        researcher.BenchmarkAssignmentsView.as_view(),
        name="api-benchmark-assignments",
    ),
]


# Researchers: running a collection (budget, notifications; docs/api.md).
urlpatterns += [
    path("benchmarks/<slug:name>/budget/", operations.BenchmarkBudgetApi.as_view(), name="api-benchmark-budget"),
    path(
        "benchmarks/<slug:name>/notifications/",
        operations.BenchmarkNotificationsApi.as_view(),
        name="api-benchmark-notifications",
    ),
]

# Researchers: people (docs/people.md).
urlpatterns += [
    path("people/", people.PeopleApi.as_view(), name="api-people"),
    path("people/import", people.PeopleImportApi.as_view(), name="api-people-import"),
    path("people/<int:person_id>/signin-link", people.PersonSigninLinkApi.as_view(), name="api-person-signin-link"),
    path(
        "people/<int:person_id>/password-reset",
        people.PersonPasswordResetApi.as_view(),
        name="api-person-password-reset",
    ),
    path("batches/<int:pk>/annotators/", people.BatchAnnotatorsApi.as_view(), name="api-batch-annotators"),
]

# Researchers: task design (docs/batches.md, "Task design").
urlpatterns += [
    path("batches/<int:pk>/design/", design.BatchDesignApi.as_view(), name="api-batch-design"),
    path("benchmarks/<slug:name>/design/", design.BenchmarkDesignApi.as_view(), name="api-benchmark-design"),
]
