"""The page a person sees for an unknown address, in the product's frame; API
paths keep their JSON error (core/errors.py).

It names the project of the address when the reader may see it, so the
project's navigation is there to go on from. (The 500 page, templates/500.html,
is rendered by Django from the template alone: no request context, no
database, since either may be what just failed; see outage.server_error.)
"""

from django.shortcuts import render

from core import errors as api_errors
from tenancy.membership import projects_for


def page_not_found(request, exception=None):
    if api_errors.is_api_request(request):
        return api_errors.page_not_found(request, exception)
    context = {"project": project_in_path(request), "request_path": request.path}
    return render(request, "404.html", context, status=404)


def project_in_path(request):
    """The project a page address is under (`/p/<slug>/…`, `/metrics/<slug>/…`,
    …), if the signed-in reader may see it; else None."""
    user = getattr(request, "user", None)
    if user is None:
        return None
    slugs = [part for part in request.path.split("/")[1:3] if part]
    return projects_for(user).filter(slug__in=slugs).order_by("slug").first() if slugs else None

