"""Slack incoming webhooks: a Block Kit message (header, the rule and its state,
each condition's value against its threshold, a button to the rule) with a
plain `text` fallback for notifications. Slack answers 404 (`no_service`) or 410
(`channel_is_archived`) for a hook that is gone, and 400/403 for a message it
will never take: none of these is retried."""

import json

from django.conf import settings

from alerts.transports import http_answer
from alerts.transports.base import Sent, Transport
from core.timestamps import utc_iso

HEADER_LIMIT = 150  # characters of a header block's plain text
FIELDS_PER_SECTION = 10
EMOJI = {"firing": ":rotating_light:", "resolved": ":white_check_mark:", "test": ":test_tube:",
         "not_running": ":warning:"}


def escape(text: str) -> str:
    """Slack's mrkdwn control characters; agent and rule text is untrusted."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def blocks(message) -> list[dict]:
    state = message.state
    at = utc_iso(message.at)
    if message.kind == "checks.not_running":
        headline = f"Checks are not running in {message.project}"
        summary = escape(message.detail)
        button = "Open the overview"
    else:
        headline = f"{state.capitalize()}: {message.rule_name}"
        verb = {"firing": "is *firing*", "resolved": "has *resolved*", "test": "sent a *test* notification"}[state]
        summary = f"Rule *{escape(message.rule_name)}* in project *{escape(message.project)}* {verb}."
        button = "Open the rule"
    found = [
        {"type": "header", "text": {"type": "plain_text", "text": _clip(f"{EMOJI[state]} {headline}", HEADER_LIMIT),
                                    "emoji": True}},
        {"type": "section", "text": {"type": "mrkdwn", "text": summary}},
    ]
    fields = [{"type": "mrkdwn", "text": f"*{escape(line.label)}*\n{escape(line.comparison)}"}
              for line in message.lines]
    for start in range(0, len(fields), FIELDS_PER_SECTION):
        found.append({"type": "section", "fields": fields[start : start + FIELDS_PER_SECTION]})
    found.append({"type": "actions", "elements": [
        {"type": "button", "text": {"type": "plain_text", "text": button}, "url": message.url,
         **({"style": "danger"} if state == "firing" else {})},
    ]})
    found.append({"type": "context", "elements": [{"type": "mrkdwn", "text": f"Denoise Dashboard · {at}"}]})
    return found


class Slack(Transport):
    @classmethod
    def render(cls, message) -> str:
        values = "; ".join(f"{line.label}: {line.comparison}" for line in message.lines)
        text = message.title + (f" ({values})" if values else "") + (f" {message.detail}" if message.detail else "")
        return json.dumps({"text": text, "blocks": blocks(message)}, ensure_ascii=False)

    def notify(self, delivery) -> Sent:
        return http_answer.post(
            self.config["url"], delivery.payload.encode(), {"Content-Type": "application/json; charset=utf-8"},
            timeout=settings.WEBHOOK_TIMEOUT_SECONDS, allow_private=settings.WEBHOOK_ALLOW_PRIVATE,
            permanent={400: "Slack refused the message (400)", 403: "Slack refused the message (403)"},
            disabling={404: "Slack: the incoming webhook was removed (404)",
                       410: "Slack: the channel is archived (410)"},
        )
