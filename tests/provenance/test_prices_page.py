"""The price table on the settings page: an admin adds, changes and removes
prices under the API's rules; a bad price is named on its row and nothing is
changed; an unpriced model's link opens the page with its row ready."""

import pytest

from tenancy.models import Membership, Project
from tests.support.accounts import client_of

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_smoke]

URL = "/p/acme/settings/"


@pytest.fixture
def admin(member_user):
    Membership.objects.filter(user=member_user).update(role="admin")
    return client_of(member_user)


def rows(*entries):
    data = {"save_prices": "1", "price-count": str(len(entries))}
    for i, (model, input_price, output_price) in enumerate(entries):
        data |= {f"price-{i}-model": model, f"price-{i}-input": input_price, f"price-{i}-output": output_price}
    return data


def test_an_admin_sets_changes_and_removes_prices(admin, project):
    answer = admin.post(URL, rows(("gpt-4o-mini", "0.15", "0.6"), ("big", "5", "15"), ("", "", "")))
    assert answer.status_code == 302
    project.refresh_from_db()
    assert project.prices == {"gpt-4o-mini": {"input_per_mtok": 0.15, "output_per_mtok": 0.6},
                              "big": {"input_per_mtok": 5.0, "output_per_mtok": 15.0}}

    page = admin.get(URL).content.decode()
    assert 'value="gpt-4o-mini"' in page and 'value="0.15"' in page

    admin.post(URL, rows(("gpt-4o-mini", "0.2", "0.8"), ("", "5", "15")))
    project.refresh_from_db()
    assert project.prices == {"gpt-4o-mini": {"input_per_mtok": 0.2, "output_per_mtok": 0.8}}


@pytest.mark.parametrize("entry, message", [
    (("m", "-1", "1"), "input: must be from 0"),
    (("m", "cheap", "1"), "input: must be a number"),
    (("m", "1", ""), "output: must be a number"),
    (("m", "1", "1e308"), "output: must be from 0"),
])
def test_a_bad_price_is_named_on_its_row_and_nothing_changes(admin, project, entry, message):
    Project.objects.filter(pk=project.pk).update(prices={"kept": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}})
    answer = admin.post(URL, rows(("kept", "9", "9"), entry))
    assert answer.status_code == 200
    assert message in answer.content.decode()
    project.refresh_from_db()
    assert project.prices == {"kept": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}}


def test_a_models_link_opens_the_page_with_its_row_ready(admin):
    page = admin.get(URL + "?model=claude-3-haiku").content.decode()
    assert 'name="price-0-model" value="claude-3-haiku"' in page


@pytest.mark.parametrize("member_role", ["viewer", "editor"])
def test_a_member_who_is_not_an_admin_cannot_change_prices(member, project):
    refused = member.post(URL, rows(("m", "1", "1")))
    assert refused.status_code == 403 and "ask an admin to make you an admin" in refused.content.decode()
    project.refresh_from_db()
    assert project.prices == {}


def test_model_names_are_escaped(admin, project):
    Project.objects.filter(pk=project.pk).update(prices={"<b>x</b>": {"input_per_mtok": 1.0, "output_per_mtok": 1.0}})
    page = admin.get(URL).content.decode()
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page
