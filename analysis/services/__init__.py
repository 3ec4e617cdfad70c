"""Operations of the reporting room: ``reports`` (statistics, agreement, the filter audit, data
frames), ``exports`` (streamed exports and export jobs) and ``evaluation`` (systems against a
benchmark, its leaderboard) and ``splits`` (named splits of the targets)."""

from analysis.services.dataset import LICENSES_HINT, DatasetFolder, benchmark_dataset_write, benchmark_dataset_zip
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
from analysis.services.splits import (
    SplitError,
    benchmark_split_import,
    benchmark_split_seeded,
    benchmark_splits,
    split_check,
)

__all__ = [
    "EXPORT_DIRECTORY",
    "LICENSES_HINT",
    "AuditUnavailable",
    "BenchmarkData",
    "BenchmarkFrames",
    "DatasetFolder",
    "EvaluationUnavailable",
    "SplitError",
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
    "benchmark_split_import",
    "benchmark_split_seeded",
    "benchmark_splits",
    "benchmark_statistics",
    "benchmark_stats_document",
    "evaluation_check",
    "export_download_record",
    "export_filename",
    "export_job_create",
    "export_job_file",
    "export_job_restart",
    "export_job_run",
    "export_jobs_fail_stuck",
    "result_load",
    "split_check",
    "system_evaluate",
    "system_evaluation_save",
]
