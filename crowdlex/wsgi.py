import os

import django

from crowdlex.collector import freeze_startup_objects

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crowdlex.settings")

# What django.core.wsgi.get_wsgi_application does, with a handler that resolves an /api/ path once.
django.setup(set_prefix=False)

from crowdlex.kept_pages import served_application  # noqa: E402 (needs the settings above)

# Researcher pages answered from the shared cache while nothing they show changed (docs/design.md §7,
# "Kept pages"); every other request goes straight to Django.
application = served_application()
freeze_startup_objects()
