from django.core.management.base import BaseCommand, CommandError

from core.command_options import add_now_argument
from provenance.retention import job
from tenancy.models import Project


class Command(BaseCommand):
    help = ("Applies every project's retention settings once (the nightly job): summarizes old nodes' text "
            "and deletes expired traces. --dry-run only counts.")

    def add_arguments(self, parser):
        add_now_argument(parser, "apply the retention rules")
        parser.add_argument("--project", help="only this project (slug), even with no retention set")
        parser.add_argument("--dry-run", action="store_true", help="count what would change; write nothing")

    def handle(self, *args, now=None, project=None, dry_run=False, **options):
        if project is not None and not Project.objects.filter(slug=project).exists():
            raise CommandError(f"--project: no project {project!r}")
        outcomes = job.apply_all(now, dry_run=dry_run, slug=project)
        if not outcomes:
            self.stdout.write("no project has retention settings; nothing to do")
        for outcome in outcomes:
            self.stdout.write(outcome.line())
