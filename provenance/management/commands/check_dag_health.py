from django.core.management.base import BaseCommand, CommandError

from core.command_options import add_now_argument
from provenance import health
from tenancy.models import Project


class Command(BaseCommand):
    help = "Runs the DAG health check (the nightly job) and stores one report per project."

    def add_arguments(self, parser):
        add_now_argument(parser, "judge the DAG")
        parser.add_argument("--project", help="check only this project (slug)")
        parser.add_argument(
            "--due", action="store_true",
            help="check only projects with no report since the last scheduled night, as the schedule does",
        )

    def handle(self, *args, now=None, project=None, due=False, **options):
        moment = now
        if project:
            found = Project.objects.filter(slug=project).first()
            if found is None:
                raise CommandError(f"--project: no project {project!r}")
            reports = [health.check_project(found, moment)]
        elif due:
            reports = health.check_due(moment)
        else:
            reports = health.check_all(moment)
        for report in reports:
            counts = ", ".join(f"{kind} {n}" for kind, n in report.counts.items())
            self.stdout.write(
                f"{report.project.slug}: {report.finding_count} findings ({counts}) over {report.node_count} nodes"
            )
