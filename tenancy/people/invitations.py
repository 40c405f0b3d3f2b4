"""Invitations by link: an admin makes one for a role, the link is shown once
(and mailed when email is configured), and the first person to open it before
it expires becomes a member with that role. Only a hash of the token is kept,
like a key's; a used, expired, withdrawn or unknown token names no project."""

import hashlib
import secrets
import smtplib
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core.mail import EmailMessage
from django.core.mail.backends.smtp import EmailBackend
from django.db import transaction
from django.template.loader import render_to_string
from django.utils import timezone

from tenancy import audit
from tenancy.models import Invitation, Project
from tenancy.people import members

DEFAULT_DAYS = 7
DAY_CHOICES = (1, 7, 30)


class NotUsable(Exception):
    """The token opens nothing; the message says why without naming a project."""


UNKNOWN = "This invitation link is not valid: check that it was copied whole, or ask for a new one."
USED = "This invitation link was already used. Each link lets one person in; ask for a new one."
EXPIRED = "This invitation link has expired or was withdrawn; ask whoever invited you for a new one."


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class Made:
    invitation: Invitation
    token: str


def create(project: Project, actor, role: str, email: str = "", days: int = DEFAULT_DAYS) -> Made:
    members.check_role(role)
    token = secrets.token_urlsafe(32)
    with transaction.atomic():
        invitation = Invitation.objects.create(
            project=project, role=role, email=email, token_hash=token_hash(token),
            created_by=actor, expires_at=timezone.now() + timedelta(days=days),
        )
        audit.record(project, actor, "invitation.create", _described(invitation),
                     after={"role": role, "email": email, "expires_at": invitation.expires_at.isoformat()})
    return Made(invitation, token)


def pending(project: Project):
    return Invitation.objects.filter(project=project, used_at__isnull=True, expires_at__gt=timezone.now())


def usable(token: str) -> Invitation:
    """The invitation the token opens, or NotUsable saying why."""
    invitation = Invitation.objects.select_related("project").filter(token_hash=token_hash(token)).first()
    if invitation is None:
        raise NotUsable(UNKNOWN)
    if invitation.used_at is not None:
        raise NotUsable(USED)
    if invitation.expires_at <= timezone.now():
        raise NotUsable(EXPIRED)
    return invitation


def accept(token: str, user) -> Invitation:
    """Makes `user` a member with the invitation's role. Single use: the
    invitation is claimed with a conditional update, so of two people opening
    the same link at once only one gets in."""
    with transaction.atomic():
        invitation = usable(token)
        claimed = Invitation.objects.filter(pk=invitation.pk, used_at__isnull=True,
                                            expires_at__gt=timezone.now()).update(used_at=timezone.now(), used_by=user)
        if not claimed:
            raise NotUsable(USED)
        members.add(invitation.project, user, user, invitation.role)
        audit.record(invitation.project, user, "invitation.accept", _described(invitation),
                     extra={"role": invitation.role})
    return invitation


def revoke(invitation: Invitation, actor) -> None:
    """Withdrawn: it expires now (its row stays, for the audit's object)."""
    with transaction.atomic():
        before = invitation.expires_at.isoformat()
        invitation.expires_at = timezone.now()
        invitation.save(update_fields=["expires_at"])
        audit.record(invitation.project, actor, "invitation.revoke", _described(invitation),
                     before={"expires_at": before}, after={"expires_at": invitation.expires_at.isoformat()})


def email_configured() -> bool:
    return bool(settings.INVITATION_EMAIL)


def mail(invitation: Invitation, link: str, inviter: str) -> str:
    """Sends the link to the invitation's address through the operator's SMTP
    server (EMAIL_* variables, as alert emails); returns what happened, in words."""
    context = {"invitation": invitation, "project": invitation.project, "link": link, "inviter": inviter}
    message = EmailMessage(f"[Denoise] {inviter} invited you to {invitation.project.slug}",
                           render_to_string("tenancy/invitation_email.txt", context),
                           settings.DEFAULT_FROM_EMAIL, [invitation.email])
    connection = EmailBackend(alias="invitations", timeout=settings.WEBHOOK_TIMEOUT_SECONDS, **settings.ALERT_SMTP)
    try:
        connection.send_messages([message])
    except (smtplib.SMTPException, OSError) as error:
        return f"The email to {invitation.email} could not be sent ({type(error).__name__}: {error}); copy the link instead."
    return f"The link was also emailed to {invitation.email}."


def _described(invitation: Invitation) -> tuple[str, int, str]:
    to = f" for {invitation.email}" if invitation.email else ""
    return ("invitation", invitation.pk, f"invitation as {invitation.role}{to}")
