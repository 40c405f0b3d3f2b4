"""The Members page (under a project's settings), the invite page an
invitation link opens, and a person's account page. Thin: the use cases are
tenancy/people/members.py, invitations.py and sessions.py."""

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.views import PasswordChangeView
from django.db import transaction
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse, reverse_lazy
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from tenancy.membership import article, changes_need, may, project_for_user_or_404
from tenancy.models import ROLE_ORDER, Invitation, Membership, Role
from tenancy.people import invitations, members, sessions

ROLE_HELP = {
    Role.VIEWER.value: "reads every page of the project",
    Role.EDITOR.value: "also changes alert rules, silences, destinations, datasets, reviews and the fuse policy",
    Role.ADMIN.value: "also manages members, API keys, settings and retention",
}


class InviteForm(forms.Form):
    role = forms.ChoiceField(choices=[(r, r) for r in ROLE_ORDER], initial=Role.VIEWER.value)
    email = forms.EmailField(required=False, help_text="Optional: the link is also mailed there when email is set up.")
    days = forms.TypedChoiceField(choices=[(d, f"{d} day{'s' if d > 1 else ''}") for d in invitations.DAY_CHOICES],
                                  coerce=int, initial=invitations.DEFAULT_DAYS, label="Expires after")


def _page(request, project, *, form=None, made=None, mailed=None, status=200):
    return render(request, "tenancy/members.html", {
        "project": project, "members": members.members_of(project), "is_admin": may(request, project, Role.ADMIN),
        "pending": invitations.pending(project).select_related("created_by"), "form": form or InviteForm(),
        "roles": ROLE_ORDER, "role_help": ROLE_HELP.items(), "made": made, "mailed": mailed,
        "link": request.build_absolute_uri(reverse("tenancy:invite", args=[made.token])) if made else "",
    }, status=status)


@never_cache
@login_required
def members_page(request, slug):
    return _page(request, project_for_user_or_404(request.user, slug))


@login_required
@require_POST
@changes_need(Role.ADMIN)
def invite(request, slug):
    project = project_for_user_or_404(request.user, slug)
    form = InviteForm(request.POST)
    if not form.is_valid():
        return _page(request, project, form=form, status=400)
    made = invitations.create(project, request.user, form.cleaned_data["role"], form.cleaned_data["email"],
                              form.cleaned_data["days"])
    mailed = None
    if made.invitation.email and invitations.email_configured():
        link = request.build_absolute_uri(reverse("tenancy:invite", args=[made.token]))
        mailed = invitations.mail(made.invitation, link, request.user.get_username())
    # Shown on this answer only: the token is kept hashed, so it cannot be shown again.
    return _page(request, project, made=made, mailed=mailed)


def _membership(request, slug, user_id):
    project = project_for_user_or_404(request.user, slug)
    return get_object_or_404(Membership.objects.select_related("user", "project"), project=project, user_id=user_id)


@login_required
@require_POST
@changes_need(Role.ADMIN)
def change_role(request, slug, user_id):
    membership = _membership(request, slug, user_id)
    role = request.POST.get("role", "")
    try:
        members.change_role(membership, request.user, role)
    except (members.LastAdmin, members.UnknownRole) as refused:
        messages.error(request, str(refused))
    else:
        messages.success(request, f"{membership.user.get_username()} is now {role_words(role)}.")
    return redirect("tenancy:members", slug)


@login_required
@require_POST
@changes_need(Role.ADMIN)
def remove(request, slug, user_id):
    membership = _membership(request, slug, user_id)
    name = membership.user.get_username()
    try:
        members.remove(membership, request.user)
    except members.LastAdmin as refused:
        messages.error(request, str(refused))
        return redirect("tenancy:members", slug)
    messages.success(request, f"{name} was removed from {slug}.")
    if membership.user_id == request.user.pk and not request.user.is_staff:
        return redirect("provenance:home")
    return redirect("tenancy:members", slug)


@login_required
@require_POST
@changes_need(Role.ADMIN)
def revoke(request, slug, invitation_id):
    project = project_for_user_or_404(request.user, slug)
    invitation = get_object_or_404(invitations.pending(project), pk=invitation_id)
    invitations.revoke(invitation, request.user)
    messages.success(request, "Invitation withdrawn: its link no longer works.")
    return redirect("tenancy:members", slug)


def role_words(role: str) -> str:
    return f"{article(role)} {role}"


class NewPersonForm(UserCreationForm):
    class Meta(UserCreationForm.Meta):
        model = get_user_model()
        fields = ("username",)


@never_cache
def invite_page(request, token):
    """Open to anyone with the link: a new person picks a username and a
    password; someone signed in joins with one click."""
    try:
        invitation = invitations.usable(token)
    except invitations.NotUsable as why:
        return render(request, "tenancy/invite.html", {"unusable": str(why)}, status=410)
    signed_in = request.user.is_authenticated
    form = None if signed_in else NewPersonForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and (signed_in or form.is_valid()):
        try:
            # The new account exists only if the invitation was still there to claim.
            with transaction.atomic():
                user = request.user if signed_in else _new_person(form, invitation)
                invitations.accept(token, user)
        except invitations.NotUsable as why:
            return render(request, "tenancy/invite.html", {"unusable": str(why)}, status=410)
        if not signed_in:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        role = Membership.objects.get(project=invitation.project, user=user).role
        messages.success(request, f"Welcome to {invitation.project.name or invitation.project.slug}: "
                                  f"you are {role_words(role)} here.")
        return redirect(invitation.project)
    return render(request, "tenancy/invite.html", {
        "invitation": invitation, "project": None, "invited_to": invitation.project, "form": form,
        "role_help": ROLE_HELP[invitation.role], "role_words": role_words(invitation.role),
        "login_url": reverse("login") + "?next=" + request.path,
    }, status=400 if form is not None and form.is_bound else 200)


def _new_person(form, invitation: Invitation):
    user = form.save(commit=False)
    user.email = invitation.email
    user.save()
    return user


class AccountView(PasswordChangeView):
    """Change password (Django's view; the other sessions of the person end,
    as Django does on a password change) and sign out everywhere."""

    template_name = "tenancy/account.html"
    success_url = reverse_lazy("tenancy:account")

    def form_valid(self, form):
        messages.success(self.request, "Password changed. Every other browser signed in as you was signed out.")
        return super().form_valid(form)

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "idle_minutes": sessions.idle_limit() // 60,
                "now": timezone.now()}


@login_required
@require_POST
def sign_out_everywhere(request):
    ended = sessions.end_every_session(request.user)
    request.session.flush()
    messages.success(request, f"Signed out everywhere ({ended} session{'s' if ended != 1 else ''} ended).")
    return redirect("login")
