from django.contrib import admin

from alerts.models import AlertEvent, AlertRule, Delivery, DeliveryAttempt, Destination


class DestinationInline(admin.TabularInline):
    model = Destination
    extra = 0
    fields = ("kind", "config", "position", "disabled_at", "disabled_reason")


@admin.register(AlertRule)
class AlertRuleAdmin(admin.ModelAdmin):
    list_display = ("name", "project", "match", "for_duration", "enabled", "state", "muted_until", "last_evaluated_at")
    list_filter = ("enabled", "state", "project")
    search_fields = ("name",)
    readonly_fields = ("state", "pending_since", "last_evaluated_at", "last_values", "last_holding")
    inlines = [DestinationInline]


@admin.register(AlertEvent)
class AlertEventAdmin(admin.ModelAdmin):
    list_display = ("rule", "state", "at", "muted")
    list_filter = ("state", "muted")
    raw_id_fields = ("rule", "project")


class AttemptInline(admin.TabularInline):
    model = DeliveryAttempt
    extra = 0
    readonly_fields = ("number", "status", "started_at", "finished_at", "success", "status_code", "latency_ms",
                       "response_excerpt", "error")


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ("webhook_id", "kind", "target", "status", "attempt_count", "next_attempt_at", "created_at")
    list_filter = ("status", "kind")
    raw_id_fields = ("rule", "event", "destination", "project")
    inlines = [AttemptInline]
