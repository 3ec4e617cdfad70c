"""Operations of the reporting room: ``reports`` (statistics, agreement, the filter audit, data
frames), ``exports`` (streamed exports and export jobs) and ``evaluation`` (systems against a
benchmark, its leaderboard), ``splits`` (named splits of the targets), ``aggregation`` (Dawid-Skene and
MACE beside the score) and ``budget`` (the budget planner)."""

from analysis.services.aggregation import (
    BenchmarkAggregation,
    aggregation_summary,
    benchmark_aggregation,
    candidate_posteriors,
)
from analysis.services.budget import BudgetUnavailable, budget_plan
from analysis.services.dataset import (
    DATASET_LICENSES,
    LICENSES_HINT,
    DatasetFolder,
    benchmark_dataset_write,
    benchmark_dataset_zip,
    license_check,
)
from analysis.services.evaluation import (
    EvaluationUnavailable,
    benchmark_leaderboard,
    evaluation_check,
    result_load,
    system_evaluate,
    system_evaluation_save,
)
from analysis.services.exports import (
    EXPORT_DIRECTORY,
    benchmark_export,
    benchmark_export_to_path,
    benchmark_stats_document,
    export_download_record,
    export_filename,
    export_job_create,
    export_job_file,
    export_job_restart,
    export_job_run,
    export_jobs_fail_stuck,
)
from analysis.services.reports import (
    AuditUnavailable,
    BenchmarkData,
    BenchmarkFrames,
    benchmark_agreement,
    benchmark_data,
    benchmark_filter_audit,
    benchmark_frames,
    benchmark_reannotation_set,
    benchmark_statistics,
)
from analysis.services.sources import benchmark_source_yield, price_per_label, source_profiles
from analysis.services.splits import (
    SplitError,
    benchmark_split_import,
    benchmark_split_seeded,
    benchmark_splits,
    split_check,
)

__all__ = [
    "DATASET_LICENSES",
    "EXPORT_DIRECTORY",
    "LICENSES_HINT",
    "AuditUnavailable",
    "BenchmarkAggregation",
    "BenchmarkData",
    "BenchmarkFrames",
    "BudgetUnavailable",
    "DatasetFolder",
    "EvaluationUnavailable",
    "SplitError",
    "aggregation_summary",
    "benchmark_aggregation",
    "benchmark_agreement",
    "benchmark_data",
    "benchmark_dataset_write",
    "benchmark_dataset_zip",
    "benchmark_export",
    "benchmark_export_to_path",
    "benchmark_filter_audit",
    "benchmark_frames",
    "benchmark_leaderboard",
    "benchmark_reannotation_set",
    "benchmark_source_yield",
    "benchmark_split_import",
    "benchmark_split_seeded",
    "benchmark_splits",
    "benchmark_statistics",
    "benchmark_stats_document",
    "budget_plan",
    "candidate_posteriors",
    "evaluation_check",
    "export_download_record",
    "export_filename",
    "export_job_create",
    "export_job_file",
    "export_job_restart",
    "export_job_run",
    "export_jobs_fail_stuck",
    "license_check",
    "price_per_label",
    "result_load",
    "source_profiles",
    "split_check",
    "system_evaluate",
    "system_evaluation_save",
]
