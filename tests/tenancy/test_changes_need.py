"""tenancy.membership.changes_need: a change needs the role, reading does not
unless the page says so; outsiders get the project's 404."""

import pytest
from django.http import Http404, HttpResponse
from django.test import RequestFactory

from tenancy.membership import changes_need
from tests.support.accounts import person


def view(request, slug):
    return HttpResponse("done")


@pytest.mark.parametrize("reading_too", [False, True])
def test_a_change_needs_the_role_and_reading_only_when_the_page_says(project, make_project, reading_too):
    guarded = changes_need("admin", reading_too=reading_too)(view)
    viewer, admin = person(project, "viewer", "vic"), person(project, "admin", "ada")
    outsider = person(make_project("globex")[0], "admin", "gina")

    def ask(method, user):
        request = getattr(RequestFactory(), method)("/p/acme/x/")
        request.user = user
        return guarded(request, slug="acme")

    assert ask("get", viewer).status_code == (403 if reading_too else 200)
    refused = ask("post", viewer)
    assert refused.status_code == 403
    assert "You are a viewer in acme; ask an admin to make you an admin." in refused.content.decode()
    assert "ada" in refused.content.decode()  # whom to ask
    assert ask("post", admin).content == b"done" and ask("get", admin).status_code == 200
    with pytest.raises(Http404):
        ask("post", outsider)
