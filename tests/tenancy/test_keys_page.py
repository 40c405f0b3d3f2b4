"""The API keys settings page: every member sees the keys (scopes, created,
last used), with no secret; an admin creates one (the secret shown once, with
the SDK snippet), rotates with a chosen grace and revokes; a viewer sees the
list read-only with the reason in words, and cannot post; names are escaped."""

import re

import pytest
from django.test import Client

from tenancy.models import ApiKey, AuditEntry, Membership, Role, hash_api_key


@pytest.fixture
def admin(project, member_user):
    Membership.objects.filter(project=project, user=member_user).update(role=Role.ADMIN)
    client = Client()
    client.force_login(member_user)
    return client


def url(project, *rest) -> str:
    return f"/p/{project.slug}/settings/keys/" + "/".join(str(r) for r in rest)


def test_the_settings_page_links_to_the_keys_page(project, member):
    assert f'href="/p/{project.slug}/settings/keys/"' in member.get(f"/p/{project.slug}/settings/").text


def test_a_viewer_sees_the_keys_read_only_with_the_reason(project, member):
    project.issue_api_key("agent <b>x</b>", ["ingest"])

    page = member.get(url(project))

    assert page.status_code == 200
    text = page.text
    assert "only the project's admins create, rotate and revoke keys" in text and "your role here is viewer" in text
    assert "agent &lt;b&gt;x&lt;/b&gt;" in text and "<b>x</b>" not in text
    assert 'id="create-key-form"' not in text and "Revoke…" not in text
    key = ApiKey.objects.get(project=project, name="agent <b>x</b>")
    assert member.post(url(project), {"name": "x", "scopes": ["read"]}).status_code == 403
    assert member.post(url(project, key.pk, "revoke")).status_code == 403
    assert ApiKey.objects.get(pk=key.pk).revoked_at is None and ApiKey.objects.count() == 2


def test_an_admin_creates_a_key_shown_once_with_the_sdk_snippet(project, admin):
    page = admin.post(url(project), {"name": "support-agent", "scopes": ["ingest"]})

    assert page.status_code == 200
    raw = re.search(r'id="issued-secret">(dd_[^<]+)<', page.text).group(1)
    key = ApiKey.objects.get(project=project, name="support-agent")
    assert key.key_hash == hash_api_key(raw) and key.scopes == ["ingest"]
    assert f'df.configure("http://testserver", api_key="{raw}")' in page.text
    assert f'export DENOISE_API_KEY="{raw}"' in page.text
    assert raw not in admin.get(url(project)).text
    assert AuditEntry.objects.get(project=project, action="key.create").actor == "user:mia"


def test_bad_input_on_the_page_names_the_field_and_stores_nothing(project, admin):
    page = admin.post(url(project), {"name": "", "scopes": ["write"]})

    assert page.status_code == 400
    assert 'data-field="name"' in page.text
    assert ApiKey.objects.filter(project=project).count() == 1


def test_an_admin_rotates_with_a_grace_and_revokes(project, admin):
    key, _ = project.issue_api_key("agent", ["ingest", "read"])

    rotated = admin.post(url(project, key.pk, "rotate"), {"grace_seconds": "86400"})

    assert rotated.status_code == 200 and "stops working after 24 hours" in rotated.text
    new = ApiKey.objects.filter(project=project, name="agent").exclude(pk=key.pk).get()
    assert new.scopes == ["ingest", "read"]
    old = ApiKey.objects.get(pk=key.pk)
    assert old.revoked_at is None and 86000 < (old.expires_at - new.created_at).total_seconds() <= 86400

    revoked = admin.post(url(project, new.pk, "revoke"), follow=True)

    assert "is revoked" in revoked.text
    assert ApiKey.objects.get(pk=new.pk).revoked_at is not None
