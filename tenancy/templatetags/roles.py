"""A page's forms ask whether their reader may use them, and say why not
beside them: `{% may_change project "editor" as can_edit %}` and
`{% read_only_note project "editor" %}`."""

from django import template
from django.utils.html import format_html

from tenancy.membership import may, read_only_reason, role_in

register = template.Library()


def _request(context):
    # An inclusion tag's template gets a fresh context without the processors'
    # values, but the request stays on it.
    return getattr(context, "request", None) or context["request"]


@register.simple_tag(takes_context=True)
def may_change(context, project, needed):
    return may(_request(context), project, needed)


@register.simple_tag(takes_context=True)
def read_only_note(context, project, needed):
    request = _request(context)
    if may(request, project, needed):
        return ""
    return format_html('<p class="read-only-note" role="note">{}</p>',
                       read_only_reason(role_in(request, project), project, needed))
