"""HTML routes of the review room: pipeline progress, flagged workers, review settings, blocks."""

from django.urls import path

from crowdlex.kept_pages import BY_NAME, kept_page
from review import views

urlpatterns = [
    path("benchmarks/<slug:name>/live/", kept_page(benchmark=BY_NAME)(views.benchmark_live), name="benchmark-live"),
    path(
        "benchmarks/<slug:name>/pipeline/",
        kept_page(benchmark=BY_NAME)(views.pipeline_progress),
        name="pipeline-progress",
    ),
    path("benchmarks/<slug:name>/pipeline/refresh/", views.pipeline_refresh, name="pipeline-refresh"),
    path(
        "benchmarks/<slug:name>/flagged-workers/",
        kept_page(benchmark=BY_NAME)(views.flagged_workers),
        name="pipeline-workers",
    ),
    path(
        "benchmarks/<slug:name>/settings/",
        kept_page(benchmark=BY_NAME)(views.benchmark_settings_page),
        name="benchmark-settings",
    ),
    path("benchmarks/<slug:name>/review-settings/", views.review_settings, name="pipeline-review-settings"),
    path("benchmarks/<slug:name>/flags/<int:flag_id>/clear/", views.flag_clear, name="pipeline-flag-clear"),
    path(
        "benchmarks/<slug:name>/workers/<int:worker_id>/block/", views.worker_block_view, name="pipeline-worker-block"
    ),
    path("benchmarks/<slug:name>/activity/<int:activity_id>/undo/", views.activity_undo_view, name="activity-undo"),
    path(
        "benchmarks/<slug:name>/workers/<int:worker_id>/unblock/",
        views.worker_unblock_view,
        name="pipeline-worker-unblock",
    ),
]
