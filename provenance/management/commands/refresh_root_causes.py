from django.core.management.base import BaseCommand, CommandError

from provenance.root_causes import catch_up
from tenancy.models import Project


class Command(BaseCommand):
    help = ("Brings the stored root causes of final answers up to date (the periodic catch-up job): the traces "
            "of every node, fuse decision and review stored since its last run. --project SLUG --all rebuilds "
            "one project's from scratch. Idempotent.")

    def add_arguments(self, parser):
        parser.add_argument("--project", help="with --all: the project to rebuild")
        parser.add_argument("--all", action="store_true", help="recompute every trace of --project")

    def handle(self, *args, project=None, all=False, **options):
        if all:
            found = Project.objects.filter(slug=project or "").first()
            if found is None:
                raise CommandError(f"--project: no project {project!r}")
            self.stdout.write(f"{catch_up.rebuild(found)} traces refreshed")
            return
        self.stdout.write(f"{catch_up.run()} traces refreshed")
