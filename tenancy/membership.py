"""Who may see which project in the pages, and with which role: members see
theirs, staff see all (as admins)."""

from django.http import Http404
from django.shortcuts import get_object_or_404

from tenancy.models import ROLE_ORDER, Membership, Project, Role


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


def role_of(user, project: Project) -> str | None:
    """The person's role in the project: staff are admins of every project;
    None for someone who is not a member. (A session reader stands for its user.)"""
    user = getattr(user, "user", user)
    if not getattr(user, "is_authenticated", False) or getattr(user, "pk", None) is None:
        return None
    if user.is_staff or user.is_superuser:
        return Role.ADMIN.value
    return Membership.objects.filter(project=project, user=user).values_list("role", flat=True).first()


def has_role(user, project: Project, needed: str) -> bool:
    """Whether the person's role in the project is `needed` or above it."""
    role = role_of(user, project)
    return role is not None and ROLE_ORDER.index(role) >= ROLE_ORDER.index(needed)
