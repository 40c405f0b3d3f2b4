from django.urls import path

from tenancy.people import views

app_name = "tenancy"

urlpatterns = [
    path("p/<slug:slug>/settings/members/", views.members_page, name="members"),
    path("p/<slug:slug>/settings/members/invite", views.invite, name="invite-create"),
    path("p/<slug:slug>/settings/members/<int:user_id>/role", views.change_role, name="member-role"),
    path("p/<slug:slug>/settings/members/<int:user_id>/remove", views.remove, name="member-remove"),
    path("p/<slug:slug>/settings/invitations/<int:invitation_id>/revoke", views.revoke, name="invite-revoke"),
    path("invite/<str:token>/", views.invite_page, name="invite"),
    path("account/", views.AccountView.as_view(), name="account"),
    path("account/sign-out-everywhere", views.sign_out_everywhere, name="sign-out-everywhere"),
]
