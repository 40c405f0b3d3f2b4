"""Every page the URL resolver knows, with every role: a viewer reads every
page of the project, an editor also changes rules, silences, destinations,
datasets, reviews and the policy, an admin also members and settings. Each
answer is 200, a 403 that says why in plain words, a redirect to sign in, or
a 404 for someone of another project; a refused change changes nothing; a page
that disables a form says why beside it; and no page of one project mentions
another project's members."""

import re

import pytest
from django.test import Client

from alerts.models import AlertRule, Destination, SharedDestination, Silence
from evals.models import Dataset
from policy.models import PolicyVersion
from provenance.models import Escalation
from tenancy.models import AuditEntry, Invitation, Membership, Project
from tenancy.people import invitations
from tests.policy.test_inbox import escalated_retry_chain
from tests.support.accounts import client_of, person
from tests.support.alerts import SECRET
from tests.support.events import node_event
from tests.support.pages import PAGES, page_url

VIEWER, EDITOR, ADMIN = "viewer", "editor", "admin"
ROLES = [VIEWER, EDITOR, ADMIN]

# What a change (POST) on each page needs. A page view that changes something
# carries its role (tenancy.membership.changes_need); the test holds the two equal.
CHANGES = {
    "alerts:rule-new": EDITOR, "alerts:rule-edit": EDITOR, "alerts:rule-toggle": EDITOR,
    "alerts:rule-mute": EDITOR, "alerts:rule-test": EDITOR, "alerts:rule-delete": EDITOR,
    "alerts:destination-enable": EDITOR, "alerts:destination-test": EDITOR, "alerts:destinations": EDITOR,
    "alerts:silences": EDITOR, "alerts:silence-end": EDITOR, "alerts:destination-delete": EDITOR,
    "alerts:shared-destination-enable": EDITOR,
    "policy:policy": EDITOR, "policy:rollback": EDITOR, "policy:apply-threshold": EDITOR, "policy:verdict": EDITOR,
    "evals:dataset-list": EDITOR, "evals:from-trace": EDITOR, "evals:dataset-import": EDITOR,
    "evals:dataset-rollback": EDITOR,
    "provenance:settings": ADMIN,
    "tenancy:invite-create": ADMIN, "tenancy:member-role": ADMIN, "tenancy:member-remove": ADMIN,
    "tenancy:invite-revoke": ADMIN,
    # The keys page (issue 26's keys work), where it is merged.
    "key-list": ADMIN, "key-rotate": ADMIN, "key-revoke": ADMIN,
}
# Pages only some roles may read (a 403 in plain words below that role).
READING_NEEDS = {"provenance:audit-log": ADMIN}
# Project pages that only read.
READS = {
    "provenance:trace-list", "provenance:bad-answers", "provenance:root-causes", "provenance:trace-detail",
    "provenance:health", "metrics:overview", "metrics:fuses", "metrics:uncertainty", "metrics:drift",
    "metrics:cost", "metrics:calibration", "metrics:data", "alerts:rule-list", "alerts:history", "alerts:inbox",
    "alerts:rule-detail", "policy:inbox", "evals:dataset-detail", "evals:dataset-export", "evals:dataset-runs",
    "evals:run-detail", "evals:run-compare", "tenancy:members",
}
# Not under a project: tested where they belong (sign-in, accounts, invitations).
ELSEWHERE = {"login", "logout", "provenance:home", "tenancy:invite", "tenancy:account",
             "tenancy:sign-out-everywhere"}
REFUSAL = re.compile(r"You are an? (viewer|editor) in acme; ask an admin to make you an? (editor|admin)\.")
OTHER_MEMBER = "gina-of-globex"


def test_every_page_is_in_the_table_and_every_change_carries_its_role():
    assert set(PAGES) - CHANGES.keys() - READS - READING_NEEDS.keys() - ELSEWHERE == set(), "a page no table knows"
    assert {name: getattr(view, "changes_need", None) for name, (_, view) in PAGES.items()
            if getattr(view, "changes_need", None) and name not in READING_NEEDS} == {
        name: role for name, role in CHANGES.items() if name in PAGES}
    assert {name: getattr(view, "reading_needs", None) for name, (_, view) in PAGES.items()
            if getattr(view, "reading_needs", None)} == {
        name: role for name, role in READING_NEEDS.items() if name in PAGES}


class Seeded:
    """A project with one of everything a page can show, three people with a
    role each, and another project with a member of its own."""

    def __init__(self, api, ingest):
        self.project = Project.objects.get(slug="acme")
        self.people = {role: person(self.project, role, f"{role}-of-acme") for role in ROLES}
        other = Project.objects.create(slug="globex")
        self.outsider = person(other, ADMIN, OTHER_MEMBER)
        ingest(node_event("n1", "t1", confidence=0.9, content="answer"))
        escalated_retry_chain(ingest, "t2")
        rule = api.post("/api/v1/alert-rules", {
            "name": "fuses", "match": "all", "for": "0m",
            "conditions": [{"metric": "fuse_rate", "window": "15m", "op": ">", "threshold": 0.2}],
            "destinations": [{"type": "webhook", "url": "https://example.org/hook", "secret": SECRET}],
        }, format="json")
        assert rule.status_code == 201, rule.content
        shared = api.post("/api/v1/destinations", {"name": "ops", "type": "webhook", "url": "https://example.org/ops",
                                                   "secret": SECRET}, format="json")
        assert shared.status_code == 201, shared.content
        silence = api.post("/api/v1/silences", {"until": "2099-01-01T00:00:00Z", "reason": "test"}, format="json")
        assert silence.status_code == 201, silence.content
        assert api.post("/api/v1/datasets", {"name": "ds"}, format="json").status_code == 201
        assert api.post("/api/v1/datasets/ds/items", {"items": [{"id": "q1", "input": "?", "expected": 1}]},
                        format="json").status_code == 200
        run = api.post("/api/v1/runs", {"dataset": "ds"}, format="json")
        assert run.status_code == 201, run.content
        made = invitations.create(self.project, self.people[ADMIN], VIEWER)
        rule_id = rule.json()["id"]
        self.kwargs = {
            "slug": "acme", "rule_id": rule_id, "silence_id": silence.json()["id"],
            "escalation_id": Escalation.objects.get().pk, "name": "ds", "run_id": run.json()["id"],
            "trace_id": "t1", "user_id": self.people[VIEWER].pk, "invitation_id": made.invitation.pk,
            "destination_id": Destination.objects.get(rule_id=rule_id).pk,
            "key_id": self.project.api_keys.get().pk,
        }
        self.shared_id = shared.json()["id"]

    def url(self, name: str) -> str:
        return page_url(name, self.kwargs, self.shared_id)


def state(project) -> tuple:
    """Everything a page's change could touch."""
    return (
        list(AlertRule.objects.filter(project=project).values_list("pk", "enabled", "muted_until", "updated_at")),
        list(Destination.objects.filter(rule__project=project).values_list("pk", "disabled_at")),
        list(SharedDestination.objects.filter(project=project).values_list("pk", "disabled_at")),
        list(Silence.objects.filter(project=project).values_list("pk", "until")),
        list(Dataset.objects.filter(project=project).values_list("pk", "version")),
        list(Escalation.objects.filter(project=project).values_list("pk", "closed_at")),
        list(Membership.objects.filter(project=project).values_list("user_id", "role").order_by("user_id")),
        list(Invitation.objects.filter(project=project).values_list("pk", "expires_at", "used_at")),
        list(Project.objects.filter(pk=project.pk).values()),
        AuditEntry.objects.filter(project=project).count(),
        PolicyVersion.objects.filter(project=project).count(),
    )


@pytest.fixture
def seeded(api, ingest, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return Seeded(api, ingest)


PROJECT_PAGES = sorted(name for name in CHANGES.keys() | READS | READING_NEEDS.keys() if name in PAGES)


@pytest.mark.parametrize("name", PROJECT_PAGES)
def test_each_role_reads_and_changes_what_the_table_says(seeded, name):
    url = seeded.url(name)
    needed = CHANGES.get(name)
    post_only = needed is not None and "POST" in _allowed_only(url, seeded)
    if post_only:  # a GET is refused by method for everyone, and names nothing
        for client in [client_of(user) for user in (*seeded.people.values(), seeded.outsider)]:
            assert client.get(url).status_code == 405, url
        answer = Client().get(url)
        assert answer.status_code == 405 or _to_sign_in(answer, url)
    reader = READING_NEEDS.get(name, VIEWER)
    for role in [] if post_only else ROLES:
        answer = client_of(seeded.people[role]).get(url)
        if ROLES.index(role) < ROLES.index(reader):
            assert answer.status_code == 403 and REFUSAL.search(answer.content.decode()), (role, url)
            continue
        assert answer.status_code in (200, 302), (role, url, answer.status_code)
        if answer.status_code == 200 and answer["Content-Type"].startswith("text/html"):
            html = answer.content.decode()
            assert OTHER_MEMBER not in html and "globex" not in html, (role, url)
            if 'class="may-change" disabled' in html:
                assert 'class="read-only-note"' in html, f"{url} disables a form without saying why to a {role}"
    if not post_only:
        assert client_of(seeded.outsider).get(url).status_code == 404
        assert _to_sign_in(Client().get(url), url)

    if needed is None or name in READING_NEEDS:
        return
    before = state(seeded.project)
    for role in ROLES[:ROLES.index(needed)]:
        refused = client_of(seeded.people[role]).post(url, {})
        assert refused.status_code == 403, (role, url, refused.status_code)
        assert REFUSAL.search(refused.content.decode()), refused.content.decode()[:2000]
    assert client_of(seeded.outsider).post(url, {}).status_code == 404
    assert _to_sign_in(Client().post(url, {}), url)
    assert state(seeded.project) == before, f"a refused POST to {url} changed something"

    # An empty form, except where the page needs to know what it acts on.
    allowed = client_of(seeded.people[needed]).post(url, {"trace_id": "t1"} if name == "evals:from-trace" else {})
    assert allowed.status_code in (200, 302, 400), (needed, url, allowed.status_code)


def _allowed_only(url, seeded) -> str:
    answer = client_of(seeded.people[ADMIN]).get(url)
    return answer.get("Allow", "") if answer.status_code == 405 else ""


def _to_sign_in(answer, url) -> bool:
    return answer.status_code == 302 and answer["Location"].startswith("/login/")


def test_a_staff_person_is_an_admin_of_every_project(seeded):
    from django.contrib.auth import get_user_model

    staff = get_user_model().objects.create_user("root", is_staff=True)
    answer = client_of(staff).post(seeded.url("tenancy:member-role"), {"role": EDITOR})
    assert answer.status_code == 302
    assert Membership.objects.get(user=seeded.people[VIEWER]).role == EDITOR
