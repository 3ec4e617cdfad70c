from django.urls import path

from annotation import views
from crowdlex.kept_pages import BY_IMPORT_JOB, BY_NAME, BY_NAME_AND_SITE, VISIBLE, kept_page

urlpatterns = [
    path("benchmarks/", kept_page(benchmark=VISIBLE)(views.benchmark_list), name="benchmark-list"),
    path("benchmarks/<slug:name>/", kept_page(benchmark=BY_NAME)(views.benchmark_detail), name="benchmark-detail"),
    path(
        "benchmarks/<slug:name>/access/",
        kept_page(benchmark=BY_NAME_AND_SITE)(views.benchmark_access),
        name="benchmark-access",
    ),
    path(
        "benchmarks/<slug:name>/access/<int:user_id>/revoke/",
        views.benchmark_access_revoke,
        name="benchmark-access-revoke",
    ),
    path(
        "benchmarks/<slug:name>/activity/",
        kept_page(benchmark=BY_NAME)(views.benchmark_activity),
        name="benchmark-activity",
    ),
    path("benchmarks/<slug:name>/candidates/", views.benchmark_candidates_add, name="benchmark-candidates-add"),
    path(
        "benchmarks/<slug:name>/import/",
        kept_page(benchmark=BY_NAME_AND_SITE)(views.benchmark_import_upload),
        name="benchmark-import",
    ),
    path(
        "import-jobs/<int:job_id>/",
        kept_page(benchmark=BY_IMPORT_JOB)(views.import_job_detail),
        name="import-job",
    ),
    path("benchmarks/<slug:name>/imports/<path:origin>/remove/", views.benchmark_import_delete, name="import-delete"),
]
