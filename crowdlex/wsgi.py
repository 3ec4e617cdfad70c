import os

import django

from crowdlex.collector import freeze_startup_objects

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crowdlex.settings")

# What django.core.wsgi.get_wsgi_application does, with a handler that resolves an /api/ path once.
django.setup(set_prefix=False)

from crowdlex.api_errors import ResolvingOnceHandler  # noqa: E402 (needs the settings above)

application = ResolvingOnceHandler()
freeze_startup_objects()
