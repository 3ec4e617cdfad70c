"""Operations of the reporting room: ``reports`` (statistics, agreement, the filter audit, data
frames) and ``exports`` (streamed exports and export jobs)."""

from analysis.services.exports import (
    EXPORT_DIRECTORY,
    benchmark_export,
    benchmark_export_to_path,
    benchmark_stats_document,
    export_filename,
    export_job_create,
    export_job_file,
    export_job_restart,
    export_job_run,
    export_jobs_fail_stuck,
)
from analysis.services.reports import (
    BenchmarkData,
    BenchmarkFrames,
    benchmark_agreement,
    benchmark_data,
    benchmark_filter_audit,
    benchmark_frames,
    benchmark_reannotation_set,
    benchmark_statistics,
)

__all__ = [
    "EXPORT_DIRECTORY",
    "BenchmarkData",
    "BenchmarkFrames",
    "benchmark_agreement",
    "benchmark_data",
    "benchmark_export",
    "benchmark_export_to_path",
    "benchmark_filter_audit",
    "benchmark_frames",
    "benchmark_reannotation_set",
    "benchmark_statistics",
    "benchmark_stats_document",
    "export_filename",
    "export_job_create",
    "export_job_file",
    "export_job_restart",
    "export_job_run",
    "export_jobs_fail_stuck",
]
