import os

from django.core.wsgi import get_wsgi_application

from crowdlex.collector import freeze_startup_objects

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crowdlex.settings")

application = get_wsgi_application()
freeze_startup_objects()
