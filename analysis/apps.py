from django.apps import AppConfig


class AnalysisConfig(AppConfig):
    name = "analysis"
    verbose_name = "Analysis: what the judgments mean"

    def ready(self) -> None:
        # Each scheme's figures and export formats register themselves when imported.
        from analysis.by_scheme import generation, prolex, swords, sws  # noqa: F401
