from django.urls import URLPattern, URLResolver, path

from analysis import views
from analysis.adjudication import views as adjudication
from analysis.browser.urls import urlpatterns as browser_urls
from analysis.figures import page_urls
from crowdlex.kept_pages import BY_NAME, BY_TARGET, kept_page

urlpatterns: list[URLPattern | URLResolver] = [
    path(
        "benchmarks/<slug:name>/statistics/",
        kept_page(benchmark=BY_NAME)(views.benchmark_statistics),
        name="analysis-statistics",
    ),
    path("benchmarks/<slug:name>/targets/", kept_page(benchmark=BY_NAME)(views.target_list), name="target-list"),
    path("targets/<int:pk>/", kept_page(benchmark=BY_TARGET)(views.target_detail), name="target-detail"),
    path(
        "benchmarks/<slug:name>/adjudication/",
        kept_page(benchmark=BY_NAME)(adjudication.adjudication_queue),
        name="adjudication-queue",
    ),
    path("benchmarks/<slug:name>/adjudication/apply/", adjudication.adjudication_apply, name="adjudication-apply"),
    path(
        "benchmarks/<slug:name>/adjudication/<int:target_id>/",
        kept_page(benchmark=BY_NAME)(adjudication.adjudication_item),
        name="adjudication-item",
    ),
    path(
        "benchmarks/<slug:name>/adjudication/<int:target_id>/decide/",
        adjudication.adjudication_decide,
        name="adjudication-decide",
    ),
    path(
        "benchmarks/<slug:name>/adjudication/<int:target_id>/resolve/",
        adjudication.adjudication_resolve,
        name="adjudication-resolve",
    ),
    path("benchmarks/<slug:name>/statistics/reannotation", views.benchmark_reannotation, name="analysis-reannotation"),
    path(
        "benchmarks/<slug:name>/evaluation/",
        kept_page(benchmark=BY_NAME)(views.benchmark_evaluation),
        name="analysis-evaluation",
    ),
    path("benchmarks/<slug:name>/evaluation/judge", views.evaluation_judge, name="analysis-evaluation-judge"),
    path("benchmarks/<slug:name>/evaluation/rescore", views.evaluation_rescore, name="analysis-evaluation-rescore"),
    path(
        "benchmarks/<slug:name>/exports/",
        kept_page(benchmark=BY_NAME)(views.benchmark_exports),
        name="analysis-exports",
    ),
    path(
        "benchmarks/<slug:name>/exports/<str:format>/download",
        views.benchmark_export_download,
        name="analysis-export-direct",
    ),
    path("benchmarks/<slug:name>/plots/<slug:plot>.<slug:file_type>", views.benchmark_plot, name="analysis-plot"),
    path("exports/<int:job_id>/download", views.export_job_download, name="analysis-export-download"),
    path("exports/<int:job_id>/restart", views.export_job_restart, name="analysis-export-restart"),
]
# The data browser (analysis/browser/).
urlpatterns += browser_urls
# Each scheme's own pages, registered by its figures plug-in.
urlpatterns += page_urls()
