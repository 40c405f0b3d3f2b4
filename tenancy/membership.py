"""Who may see which project in the pages: members see theirs, staff see all."""

from django.http import Http404
from django.shortcuts import get_object_or_404

from tenancy.models import Project


def projects_for(user):
    # An API request's principal: a session reader stands for its user; a key is no user.
    user = getattr(user, "user", user)
    if not user.is_authenticated or getattr(user, "pk", None) is None:
        return Project.objects.none()
    if user.is_staff:
        return Project.objects.all()
    return Project.objects.filter(members=user)


def project_for_user_or_404(user, slug: str) -> Project:
    project = get_object_or_404(projects_for(user), slug=slug)
    if project is None:
        raise Http404
    return project
