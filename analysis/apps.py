from django.apps import AppConfig


class AnalysisConfig(AppConfig):
    name = "analysis"
    verbose_name = "Analysis: what the judgments mean"

    def ready(self) -> None:
        # Each scheme's figures and export formats are plug-ins of this room in its own package.
        from schemes import load_plugins

        load_plugins(self.name)
