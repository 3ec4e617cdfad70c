from django.urls import path

from annotation import views
from crowdlex.kept_pages import BY_NAME, kept_page

urlpatterns = [
    path("benchmarks/", views.benchmark_list, name="benchmark-list"),
    path("benchmarks/<slug:name>/", kept_page(benchmark=BY_NAME)(views.benchmark_detail), name="benchmark-detail"),
    path("benchmarks/<slug:name>/access/", views.benchmark_access, name="benchmark-access"),
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
    path("benchmarks/<slug:name>/import/", views.benchmark_import_upload, name="benchmark-import"),
    path("import-jobs/<int:job_id>/", views.import_job_detail, name="import-job"),
    path("benchmarks/<slug:name>/imports/<path:origin>/remove/", views.benchmark_import_delete, name="import-delete"),
]
