from django.apps import AppConfig
from django.db.backends.signals import connection_created


class ProvenanceConfig(AppConfig):
    name = "provenance"
    verbose_name = "Provenance"

    def ready(self):
        from core.timestamps import install_clamping_loaders

        connection_created.connect(install_clamping_loaders, dispatch_uid="provenance-clamping-loaders")
