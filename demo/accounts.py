"""The demo's users, project, API key and alert rules, created once and reused.

The raw API key is only ever shown once by the product, so the demo keeps it in
`var/demo-credentials.json` (var/ is not committed) to print it on every run.
"""

import json
import os
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from demo.step_costs import PRICES
from tenancy.models import ApiKey, Membership, Project, Role, hash_api_key

PROJECT_SLUG = "demo"
PROJECT_NAME = "Demo: customer tickets"
KEY_NAME = "demo"


@dataclass(frozen=True)
class DemoAccess:
    project: Project
    api_key: str
    rules: int | None  # demo alert rules installed; None when the alerts app offers none


def credentials_path() -> Path:
    return Path(settings.VAR_DIR) / "demo-credentials.json"


def ensure_user(username: str, password: str, *, superuser: bool):
    User = get_user_model()
    user, created = User.objects.get_or_create(
        username=username, defaults={"is_staff": superuser, "is_superuser": superuser}
    )
    if created or not user.check_password(password) or user.is_superuser != superuser:
        user.set_password(password)
        user.is_staff = user.is_superuser = superuser
        user.is_active = True
        user.save()
    return user


def stored_key(project: Project) -> str | None:
    """The raw key from the credentials file, if it still opens this project."""
    try:
        raw = json.loads(credentials_path().read_text())["api_key"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    active = ApiKey.objects.filter(project=project, key_hash=hash_api_key(raw), revoked_at__isnull=True)
    return raw if isinstance(raw, str) and active.exists() else None


def write_credentials(project: Project, raw: str) -> None:
    path = credentials_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"project": project.slug, "api_key": raw}) + "\n")
    os.chmod(path, 0o600)


def install_rules(project: Project) -> int:
    """The demo's alert rules, delivering to the built-in webhook inbox."""
    from demo.alert_rules import install_demo_rules

    return len(install_demo_rules(project, inbox=True))


def ensure_demo_access() -> DemoAccess:
    with transaction.atomic():
        demo = ensure_user("demo", "demo", superuser=False)
        ensure_user("admin", "admin", superuser=True)
        project, _ = Project.objects.get_or_create(slug=PROJECT_SLUG, defaults={"name": PROJECT_NAME})
        if not project.prices:
            # The demo's fake models at list-like prices, so its steps have costs.
            project.prices = PRICES
            project.save(update_fields=["prices"])
        # The demo person runs the demo project; a read-only colleague shows what a viewer sees.
        Membership.objects.update_or_create(project=project, user=demo, defaults={"role": Role.ADMIN})
        viewer = ensure_user("viewer", "viewer", superuser=False)
        Membership.objects.get_or_create(project=project, user=viewer, defaults={"role": Role.VIEWER})
        raw = stored_key(project)
        if raw is None:
            _, raw = project.issue_api_key(KEY_NAME)
            write_credentials(project, raw)
    return DemoAccess(project, raw, install_rules(project))
