from django.apps import AppConfig


class AnalysisConfig(AppConfig):
    name = "analysis"
    verbose_name = "Analysis: what the judgments mean"

    def ready(self) -> None:
        # Each scheme's figures and export formats are plug-ins of this room in its own package.
        from schemes import load_plugins

        load_plugins(self.name)
        # The batch form's preview shows the budget planner (hits never imports analysis).
        from analysis.services.budget import budget_preview_panel
        from hits.preview import register_preview_panel

        register_preview_panel(budget_preview_panel)
        # Registers the export task by name in every process, so the export jobs can queue it
        # without importing it (analysis.services.exports.EXPORT_RUN_TASK). Registers the
        # statistics, evaluation and adjudication figures to bring up to date after a change
        # (annotation.warm), once the schemes' figures above are loaded.
        from analysis import tasks, warmers  # noqa: F401
