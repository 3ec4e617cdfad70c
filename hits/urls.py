from django.urls import path

from crowdlex.kept_pages import ACCOUNT_ONLY, BY_BATCH, BY_HIT, BY_NAME, BY_NAME_AND_SITE, EVERYTHING, kept_page
from hits.design import views as design_views
from hits.people import views as people_views
from hits.qualification import views as qualification
from hits.views import annotator, operations, researcher

urlpatterns = [
    path("work/", annotator.work_home, name="work-home"),
    path("work/next", annotator.work_next, name="work-next"),
    path("work/mine/", annotator.work_mine, name="work-mine"),
    path("work/projects/<int:batch_id>/next", annotator.work_project_next, name="work-project-next"),
    path("work/assignments/<int:assignment_id>/", annotator.work_assignment, name="work-assignment"),
    path("work/assignments/<int:assignment_id>/return", annotator.work_return, name="work-return"),
    path("work/assignments/<int:assignment_id>/flag", annotator.work_flag, name="work-flag"),
    path("work/qualification/<slug:name>/", qualification.qualification_take, name="qualification-take"),
]

# The qualification test, researchers' side (docs/qualification.md).
urlpatterns += [
    path(
        "benchmarks/<slug:name>/qualification/",
        kept_page(benchmark=BY_NAME)(qualification.qualification_detail),
        name="qualification-detail",
    ),
    path(
        "benchmarks/<slug:name>/qualification/build/",
        qualification.qualification_build_page,
        name="qualification-build",
    ),
    path(
        "benchmarks/<slug:name>/qualification/active/",
        qualification.qualification_active,
        name="qualification-active",
    ),
    path(
        "benchmarks/<slug:name>/qualification/attempts/<int:attempt_id>/reset/",
        qualification.qualification_reset,
        name="qualification-reset",
    ),
]

# Researcher pages (batches and HITs).
urlpatterns += [
    # Its batch form offers the annotator accounts by name: an account made or renamed moves the site's key.
    path(
        "benchmarks/<slug:name>/batches/",
        kept_page(benchmark=BY_NAME_AND_SITE)(researcher.batch_list),
        name="batch-list",
    ),
    path(
        "benchmarks/<slug:name>/assignments/",
        kept_page(benchmark=BY_NAME)(researcher.benchmark_assignments),
        name="benchmark-assignments",
    ),
    path("batches/<int:pk>/", kept_page(benchmark=BY_BATCH)(researcher.batch_detail), name="batch-detail"),
    path("batches/<int:pk>/live/", kept_page(benchmark=BY_BATCH)(researcher.batch_live), name="batch-live"),
    path("batches/<int:pk>/close/", researcher.batch_close, name="batch-close"),
    path("batches/<int:pk>/reopen/", researcher.batch_reopen, name="batch-reopen"),
    path(
        "benchmarks/<slug:name>/operations/",
        kept_page(benchmark=BY_NAME)(operations.benchmark_operations),
        name="benchmark-operations",
    ),
    path(
        "benchmarks/<slug:name>/operations/secret/",
        operations.benchmark_webhook_secret,
        name="benchmark-webhook-secret",
    ),
    path("batches/<int:pk>/clone/", researcher.batch_clone, name="batch-clone"),
    path("batches/<int:pk>/hits.csv", kept_page(benchmark=BY_BATCH)(researcher.batch_export), name="batch-export"),
    path("hits/<int:pk>/", kept_page(benchmark=BY_HIT)(researcher.hit_detail), name="hit-detail"),
    path(
        "benchmarks/<slug:name>/hit-flags/",
        kept_page(benchmark=BY_NAME)(researcher.benchmark_flags),
        name="benchmark-flags",
    ),
    path("candidates/<int:pk>/exclude/", researcher.candidate_exclude, name="candidate-exclude"),
]


# People (docs/people.md): researchers manage annotators' accounts; a one-time link signs one in.
urlpatterns += [
    path("people/", kept_page(benchmark=EVERYTHING)(people_views.people), name="people"),
    path("people/import/", kept_page(benchmark=ACCOUNT_ONLY)(people_views.people_import), name="people-import"),
    path(
        "people/<int:person_id>/",
        kept_page(benchmark=EVERYTHING)(people_views.person_detail),
        name="people-detail",
    ),
    path("people/<int:person_id>/signin-link/", people_views.person_signin_link, name="people-signin-link"),
    path("people/<int:person_id>/password-reset/", people_views.person_password_reset, name="people-password-reset"),
    path("people/<int:person_id>/batches/", people_views.person_batch_add, name="people-batch-add"),
    path("accounts/signin/<uidb64>/<token>/", people_views.SigninView.as_view(), name="people-signin"),
]

# Task design (docs/batches.md, "Task design"): a batch's, a benchmark's template, the worker's preview.
urlpatterns += [
    path(
        "batches/<int:pk>/design/", kept_page(benchmark=BY_BATCH)(design_views.batch_design_page), name="batch-design"
    ),
    path(
        "batches/<int:pk>/preview/",
        kept_page(benchmark=BY_BATCH)(design_views.batch_worker_preview),
        name="batch-worker-preview",
    ),
    path(
        "benchmarks/<slug:name>/design/",
        kept_page(benchmark=BY_NAME)(design_views.design_template_page),
        name="design-template",
    ),
]
