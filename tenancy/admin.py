from django.contrib import admin, messages

from tenancy.models import ApiKey, Membership, Project


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


class ApiKeyInline(admin.TabularInline):
    model = ApiKey
    extra = 0
    fields = ["name", "prefix", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["prefix", "created_at", "last_used_at"]
    can_delete = False


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "high_uncertainty_threshold", "created_at"]
    search_fields = ["slug", "name"]
    inlines = [MembershipInline, ApiKeyInline]
    actions = ["issue_key"]

    @admin.action(description="Issue a new API key (shown once)")
    def issue_key(self, request, queryset):
        for project in queryset:
            _, raw = project.issue_api_key(name=f"admin:{request.user.get_username()}")
            self.message_user(request, f"{project.slug}: new API key {raw} — copy it now, it is not shown again.",
                              messages.WARNING)


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["prefix", "name", "project", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["project"]
    readonly_fields = ["prefix", "key_hash", "created_at", "last_used_at"]
    actions = ["revoke"]

    def has_add_permission(self, request):
        # Keys are issued from the project page so that the raw value can be shown once.
        return False

    @admin.action(description="Revoke selected keys")
    def revoke(self, request, queryset):
        count = 0
        for key in queryset.filter(revoked_at__isnull=True):
            key.revoke()
            count += 1
        self.message_user(request, f"Revoked {count} key(s).")
