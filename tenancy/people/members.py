"""Changing who is in a project and with which role: each use case one
transaction, with its audit entry. A project keeps at least one admin: the
admins' rows are locked while the change is judged, so two admins demoting
each other at once cannot leave it without one."""

from django.db import transaction

from tenancy import audit
from tenancy.models import ROLE_ORDER, Membership, Project, Role


class LastAdmin(Exception):
    """The change would leave the project without an admin."""


class UnknownRole(ValueError):
    pass


def members_of(project: Project):
    return Membership.objects.filter(project=project).select_related("user").order_by("user__username")


def check_role(role: str) -> str:
    if role not in ROLE_ORDER:
        raise UnknownRole(f"role must be one of {', '.join(ROLE_ORDER)}")
    return role


def _keeps_an_admin(membership: Membership) -> None:
    admins = list(Membership.objects.select_for_update().filter(project=membership.project_id, role=Role.ADMIN)
                  .values_list("pk", flat=True))
    if admins == [membership.pk]:
        name = membership.user.get_username()
        raise LastAdmin(f"{name} is the last admin of {membership.project.slug}: make someone else an admin "
                        f"first, so the project keeps one.")


def add(project: Project, actor, user, role: str) -> Membership:
    """Makes `user` a member with `role`; an existing member only ever moves up
    (an invitation never demotes anyone)."""
    check_role(role)
    with transaction.atomic():
        membership, created = Membership.objects.select_for_update().get_or_create(
            project=project, user=user, defaults={"role": role})
        if created:
            audit.record(project, actor, "member.add", _described(membership), after={"role": role})
        elif ROLE_ORDER.index(role) > ROLE_ORDER.index(membership.role):
            _set_role(membership, actor, role)
    return membership


def change_role(membership: Membership, actor, role: str) -> Membership:
    check_role(role)
    with transaction.atomic():
        if membership.role == Role.ADMIN and role != Role.ADMIN:
            _keeps_an_admin(membership)
        _set_role(membership, actor, role)
    return membership


def remove(membership: Membership, actor) -> None:
    with transaction.atomic():
        if membership.role == Role.ADMIN:
            _keeps_an_admin(membership)
        audit.record(membership.project, actor, "member.remove", _described(membership),
                     before={"role": membership.role})
        membership.delete()


def _set_role(membership: Membership, actor, role: str) -> None:
    before = membership.role
    membership.role = role
    membership.save(update_fields=["role"])
    audit.record(membership.project, actor, "member.role", _described(membership),
                 before={"role": before}, after={"role": role})


def _described(membership: Membership) -> tuple[str, int, str]:
    return ("membership", membership.user_id, f"member {membership.user.get_username()}")
