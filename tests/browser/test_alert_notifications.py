"""A Slack message and an email as a person sees them: the Block Kit message the
Slack stand-in received, drawn locally the way Slack lays blocks out, and the
HTML part the SMTP server received, both rendered in Chromium and kept as the
README's screenshots (screenshots/alert-slack.png, screenshots/alert-email.png)."""

import html
import io
import re

import pytest
from django.core.management import call_command

from tests.support.alerts import at_minute
from tests.support.browser import SCREENSHOTS
from tests.support.events import node_event

pytestmark = [pytest.mark.browser]
FUSED = {"fuse": {"decision": "block", "reason": "low"}}


def mrkdwn(text: str) -> str:
    """Slack's entity-escaped mrkdwn to safe HTML (*bold*, line breaks)."""
    plain = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return re.sub(r"\*([^*\n]+)\*", r"<b>\1</b>", html.escape(plain)).replace("\n", "<br>")


def slack_page(message: dict) -> str:
    """The blocks the way Slack's client lays them out, closely enough to read."""
    parts = []
    for block in message["blocks"]:
        kind = block["type"]
        if kind == "header":
            parts.append(f'<div class="header">{html.escape(re.sub(r"^:[a-z_]+: ", "", block["text"]["text"]))}</div>')
        elif kind == "section" and "text" in block:
            parts.append(f'<div class="section">{mrkdwn(block["text"]["text"])}</div>')
        elif kind == "section":
            fields = "".join(f'<div class="field">{mrkdwn(f["text"])}</div>' for f in block["fields"])
            parts.append(f'<div class="fields">{fields}</div>')
        elif kind == "actions":
            buttons = "".join(f'<span class="button {html.escape(e.get("style", ""))}">{html.escape(e["text"]["text"])}'
                              "</span>" for e in block["elements"])
            parts.append(f'<div class="actions">{buttons}</div>')
        elif kind == "context":
            parts.append(f'<div class="context">{mrkdwn(block["elements"][0]["text"])}</div>')
    return f"""<!doctype html><meta charset="utf-8"><style>
      body {{ font: 15px/1.46 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 0; padding: 20px;
              background: #fff; color: #1d1c1d; width: 640px; }}
      .msg {{ display: flex; gap: 10px; }} .avatar {{ width: 36px; height: 36px; border-radius: 6px; background: #4a154b; }}
      .who b {{ margin-right: 6px; }} .who span {{ color: #616061; font-size: 12px; }}
      .app {{ background: #e8e8e8; font-size: 10px; padding: 1px 3px; border-radius: 2px; margin-right: 6px; }}
      .header {{ font-size: 18px; font-weight: 900; margin: 6px 0; }} .section {{ margin: 4px 0; }}
      .fields {{ display: grid; grid-template-columns: 1fr 1fr; gap: 8px 16px; margin: 8px 0; }}
      .actions {{ margin: 8px 0; }} .button {{ display: inline-block; border: 1px solid #ddd; border-radius: 4px;
        padding: 4px 12px; font-weight: 700; font-size: 13px; }} .button.danger {{ background: #e01e5a; color: #fff;
        border-color: #e01e5a; }} .context {{ color: #616061; font-size: 12px; }}
    </style><div class="msg"><div class="avatar"></div><div><div class="who"><b>Denoise Dashboard</b>
    <span class="app">APP</span><span>09:01</span></div>{''.join(parts)}</div></div>"""


def test_a_slack_message_and_an_email_render_as_people_see_them(api, ingest, slack, smtp, page, settings):
    settings.SITE_ROOT = "https://denoise.example"
    api.post("/api/v1/alert-rules", {"name": "Extraction fuses", "match": "all", "conditions": [
        {"metric": "fuse_rate", "window": "15m", "filters": {"step": "entity_extraction"}, "op": ">",
         "threshold": 0.2},
        {"metric": "high_uncertainty_ratio", "window": "15m", "change": "relative", "op": ">", "threshold": 0.5}],
        "destinations": [{"type": "slack", "url": slack.url}, {"type": "email", "to": ["oncall@example.org"]}]},
        format="json")
    ingest(*[node_event(f"old{i}", f"o{i}", seconds=i - 900, step="entity_extraction", confidence=0.3 if i == 0 else 0.9)
             for i in range(4)],
           *[node_event(f"e{i}", f"t{i}", seconds=10 + i, step="entity_extraction", confidence=0.3,
                        **(FUSED if i % 3 else {})) for i in range(9)])
    call_command("evaluate_alerts", "--now", at_minute(1).isoformat(), stdout=io.StringIO())
    [request] = slack.received
    assert request.problems == []

    page.set_viewport_size({"width": 680, "height": 250})
    page.set_content(slack_page(request.json))
    assert "Firing: Extraction fuses" in page.inner_text("body")
    assert "66.7% > 20.0%" in page.inner_text("body") and "+300.0% > +50.0%" in page.inner_text("body")
    page.screenshot(path=str(SCREENSHOTS / "alert-slack.png"), full_page=True)

    [(_, _, mail)] = smtp.messages
    page.set_viewport_size({"width": 680, "height": 330})
    page.set_content(mail.get_body(("html",)).get_content())
    assert "Firing: Extraction fuses" in page.inner_text("body")
    page.screenshot(path=str(SCREENSHOTS / "alert-email.png"), full_page=True)
