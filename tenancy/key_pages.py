"""The "API keys" settings page: every member sees the project's keys (scopes,
creation, last use); its admins create one (the secret shown on the answer
to that request only, with the SDK snippet that uses it), rotate one with the
grace they choose, and revoke one. The use cases: tenancy/api_keys.py."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path
from django.views.decorators.http import require_http_methods, require_POST

from core.errors import ApiError
from tenancy import api_keys
from tenancy.membership import changes_need, project_for_user_or_404, role_of
from tenancy.models import ALL_SCOPES, Role

# The rotation graces the page offers, in seconds.
GRACES = [(0, "at once"), (3600, "after 1 hour"), (24 * 3600, "after 24 hours"), (7 * 24 * 3600, "after 7 days")]
SCOPE_HELP = {
    "ingest": "send events and spans, read the fuse policy and truth sets, record evaluation runs: what an agent needs",
    "read": "every GET: traces, metrics, alerts, the Prometheus scrape",
    "admin": "everything, including keys",
}


def page(request, project, *, issued=None, errors=None, posted=None, status=200):
    role = role_of(request.user, project)
    keys = list(api_keys.of_project(project))
    for key in keys:
        key.stopped = api_keys.is_revoked(key)
    return render(request, "tenancy/api_keys.html", {
        "project": project,
        "keys": keys,
        "may_manage": role == Role.ADMIN.value,
        "role": role,
        "scopes": [(scope, SCOPE_HELP[scope]) for scope in ALL_SCOPES],
        "graces": GRACES,
        "issued": issued,
        "errors": errors or {},
        "posted_name": (posted or {}).get("name", ""),
        "posted_scopes": (posted or {}).get("scopes", ["ingest"]),
        "base_url": request.build_absolute_uri("/").rstrip("/"),
    }, status=status)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
@changes_need(Role.ADMIN)
def keys_page(request, slug):
    project = project_for_user_or_404(request.user, slug)
    if request.method != "POST":
        return page(request, project)
    posted = {"name": request.POST.get("name", ""), "scopes": request.POST.getlist("scopes")}
    try:
        key, raw = api_keys.create(project, request.user, posted["name"], posted["scopes"])
    except ApiError as error:
        return page(request, project, errors=error.fields, posted=posted, status=400)
    # Answered here, never redirected: the secret must not be kept anywhere to show it again.
    return page(request, project, issued={"key": key, "raw": raw, "action": "created"})


@login_required
@require_POST
@changes_need(Role.ADMIN)
def rotate_key(request, slug, key_id):
    project = project_for_user_or_404(request.user, slug)
    key = get_object_or_404(api_keys.of_project(project), pk=key_id)
    grace = request.POST.get("grace_seconds", "")
    try:
        # isdigit() alone also takes digits int() refuses ("²"): those go on as text, and are refused.
        new, raw = api_keys.rotate(key, request.user, int(grace) if grace.isascii() and grace.isdigit() else grace)
    except ApiError as error:
        messages.error(request, f"Key {key.name} was not rotated: {error.message}")
        return redirect("key-list", project.slug)
    return page(request, project, issued={"key": new, "raw": raw, "action": "rotated", "old": key,
                                          "grace": dict(GRACES).get(int(grace), f"after {grace} s")})


@login_required
@require_POST
@changes_need(Role.ADMIN)
def revoke_key(request, slug, key_id):
    project = project_for_user_or_404(request.user, slug)
    key = api_keys.revoke(get_object_or_404(api_keys.of_project(project), pk=key_id), request.user)
    messages.success(request, f"Key {key.name} ({key.prefix}…) is revoked: its requests get 401 from now on.")
    return redirect("key-list", project.slug)


urlpatterns = [
    path("p/<slug:slug>/settings/keys/", keys_page, name="key-list"),
    path("p/<slug:slug>/settings/keys/<int:key_id>/rotate", rotate_key, name="key-rotate"),
    path("p/<slug:slug>/settings/keys/<int:key_id>/revoke", revoke_key, name="key-revoke"),
]
