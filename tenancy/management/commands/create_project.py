import json

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils.text import slugify

from tenancy.models import Project


class Command(BaseCommand):
    help = "Creates a project and an API key for it; the key is printed once."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--name", default="")
        parser.add_argument("--json", action="store_true", help='print {"project": ..., "api_key": ...}')

    def handle(self, *args, slug, name, **options):
        if slugify(slug) != slug:
            raise CommandError(f"{slug!r} is not a valid slug (lowercase letters, digits, - and _)")
        with transaction.atomic():
            if Project.objects.filter(slug=slug).exists():
                raise CommandError(f"project {slug!r} already exists")
            project = Project.objects.create(slug=slug, name=name or slug)
            _, raw = project.issue_api_key("create_project")
        if options["json"]:
            self.stdout.write(json.dumps({"project": project.slug, "api_key": raw}))
        else:
            self.stdout.write(f"Created project {project.slug}\nAPI key (shown once): {raw}")
