"""REST API of the analysis (researchers only): statistics, agreement, the filter audit, the
re-annotation mark, exports (jobs, their files, and direct streamed downloads), splits, and systems
evaluated against a benchmark with its leaderboard, and the API of each scheme's own pages. One
module per job; this one gathers the URLs."""

from django.urls import path

from analysis.api.evaluation import (
    EvaluationJudgementListCreateView,
    EvaluationListCreateView,
    EvaluationRescoreView,
    SplitListCreateView,
)
from analysis.api.exports import (
    DirectExportView,
    ExportJobDetailView,
    ExportJobDownloadView,
    ExportJobListCreateView,
    ExportJobRestartView,
    direct_export_allowed,
    direct_export_response,
    export_job_download_response,
)
from analysis.api.figures import (
    AgreementView,
    FilterAuditView,
    ReannotationView,
    SourceYieldView,
    StatisticsView,
)
from analysis.api.plots import PlotFileView, PlotListView
from analysis.figures import api_page_urls

__all__ = ["direct_export_allowed", "direct_export_response", "export_job_download_response", "urlpatterns"]

urlpatterns = [
    path("benchmarks/<slug:name>/statistics", StatisticsView.as_view(), name="api-benchmark-statistics"),
    path("benchmarks/<slug:name>/statistics/sources", SourceYieldView.as_view(), name="api-benchmark-source-yield"),
    path("benchmarks/<slug:name>/agreement", AgreementView.as_view(), name="api-benchmark-agreement"),
    path("benchmarks/<slug:name>/filter-audit", FilterAuditView.as_view(), name="api-benchmark-filter-audit"),
    path("benchmarks/<slug:name>/reannotation", ReannotationView.as_view(), name="api-benchmark-reannotation"),
    path("benchmarks/<slug:name>/exports", ExportJobListCreateView.as_view(), name="api-benchmark-exports"),
    path("benchmarks/<slug:name>/export/<str:export_format>", DirectExportView.as_view(), name="api-benchmark-export"),
    path("benchmarks/<slug:name>/splits", SplitListCreateView.as_view(), name="api-benchmark-splits"),
    path("benchmarks/<slug:name>/evaluations", EvaluationListCreateView.as_view(), name="api-benchmark-evaluations"),
    path(
        "benchmarks/<slug:name>/evaluations/judgements",
        EvaluationJudgementListCreateView.as_view(),
        name="api-benchmark-evaluation-judgements",
    ),
    path(
        "benchmarks/<slug:name>/evaluations/rescore",
        EvaluationRescoreView.as_view(),
        name="api-benchmark-evaluation-rescore",
    ),
    path("benchmarks/<slug:name>/plots", PlotListView.as_view(), name="api-benchmark-plots"),
    path(
        "benchmarks/<slug:name>/plots/<slug:plot>.<slug:file_type>", PlotFileView.as_view(), name="api-benchmark-plot"
    ),
    path("exports/<int:job_id>", ExportJobDetailView.as_view(), name="api-export-detail"),
    path("exports/<int:job_id>/download", ExportJobDownloadView.as_view(), name="api-export-download"),
    path("exports/<int:job_id>/restart", ExportJobRestartView.as_view(), name="api-export-restart"),
]
# The API of each scheme's own pages, registered by its figures plug-in.
urlpatterns += api_page_urls()
