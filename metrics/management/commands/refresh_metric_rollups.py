from django.core.management.base import BaseCommand

from metrics.rollups.refresh import refresh_rollups


class Command(BaseCommand):
    help = "Folds nodes and fuse decisions that arrived since the last run into the metric rollups."

    def handle(self, *args, **options):
        self.stdout.write(str(refresh_rollups()))
