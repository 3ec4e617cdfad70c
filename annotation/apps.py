from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation: benchmarks and what is judged"

    def ready(self) -> None:
        # Work held to a transaction's commit is made just before it, in every process: the moves of
        # the benchmarks' change counters (crowdlex.transactions; docs/design.md §7).
        from crowdlex.transactions import install_hold_to_commit

        install_hold_to_commit()

        # Registers the import task by name in every process, so the import jobs can queue it
        # without importing it (annotation.importers.jobs.IMPORT_RUN_TASK); and the benchmark
        # page's figures to bring up to date after a change (annotation.warm).
        from annotation import tasks, warmers  # noqa: F401

        # What changes a signed-in account forgets the copy kept in the shared cache, in every
        # process that writes (crowdlex.accounts).
        from crowdlex.accounts import connect_signals

        connect_signals()

        # What the pages outside one benchmark show moves the site's change key (annotation.changes).
        from annotation.changes import connect_site_signals

        connect_site_signals()
