"""Template helpers of the trace explorer pages."""

from django import template
from django.urls import NoReverseMatch, reverse

from provenance import costs
from provenance.explorer import colors

register = template.Library()


@register.filter
def confidence_color(value) -> str:
    """The color of a confidence on the product's one scale (grey when unknown)."""
    return colors.confidence_color(value)


@register.filter
def usd(value) -> str:
    return costs.format_usd(value)


@register.filter
def milliseconds(value) -> str:
    return costs.format_ms(value)


@register.filter
def absolute(value):
    return abs(value) if value is not None else None


@register.simple_tag(takes_context=True)
def same_page_in(context, slug: str) -> str:
    """The current kind of page in another project (its trace list when the
    current page is about one object of this project)."""
    request = context.get("request")
    match = getattr(request, "resolver_match", None)
    if match and set(match.kwargs) == {"slug"}:
        try:
            return reverse(match.view_name, kwargs={"slug": slug})
        except NoReverseMatch:
            pass
    return reverse("provenance:trace-list", args=[slug])
