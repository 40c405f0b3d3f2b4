"""HTTP conditional requests on the policy: `If-None-Match` (RFC 9110 §13.1.2,
weak comparison) and `If-Match` (strong comparison)."""


def entity_tags(header: str | None) -> list[str]:
    if not header:
        return []
    return [tag.strip() for tag in header.split(",") if tag.strip()]


def none_match(header: str | None, etag: str) -> bool:
    """True when `If-None-Match` names `etag` (or `*`): the client's copy is current."""
    tags = entity_tags(header)
    return "*" in tags or weak(etag) in {weak(tag) for tag in tags}


def match_fails(header: str | None, etag: str) -> bool:
    """True when an `If-Match` is given and names neither `etag` nor `*`."""
    tags = entity_tags(header)
    return bool(tags) and "*" not in tags and etag not in tags


def weak(tag: str) -> str:
    return tag[2:] if tag.startswith("W/") else tag
