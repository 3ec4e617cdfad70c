import importlib
import pkgutil

from django.apps import AppConfig


class SchemesConfig(AppConfig):
    name = "schemes"
    verbose_name = "Annotation schemes"

    def ready(self) -> None:
        # Every scheme is a package here that registers itself when imported: found, not listed.
        import schemes

        for found in pkgutil.iter_modules(schemes.__path__):
            if found.ispkg and found.name != "templatetags":
                importlib.import_module(f"schemes.{found.name}")
