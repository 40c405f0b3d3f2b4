"""Email through Django's SMTP backend (the variables EMAIL_HOST, EMAIL_PORT,
EMAIL_HOST_USER, EMAIL_HOST_PASSWORD, EMAIL_USE_TLS, read into the ALERT_SMTP
setting, and DEFAULT_FROM_EMAIL): one message per state
change, a plain-text and an HTML part, subject `[Denoise] firing: RULE NAME`.
The SMTP server is the operator's, so no address guard applies. A server that
refuses every recipient will refuse them again: not retried."""

import json
import smtplib

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.core.mail.backends.smtp import EmailBackend
from django.template.loader import render_to_string

from alerts.transports.base import Sent, Transport, TransportError
from core.timestamps import utc_iso


def parts(message) -> dict:
    context = {"message": message, "at": utc_iso(message.at)}
    return {"subject": message.title,
            "text": render_to_string("alerts/email/notification.txt", context),
            "html": render_to_string("alerts/email/notification.html", context)}


class Email(Transport):
    @classmethod
    def render(cls, message) -> str:
        return json.dumps(parts(message), ensure_ascii=False)

    def notify(self, delivery) -> Sent:
        content = json.loads(delivery.payload)
        mail = EmailMultiAlternatives(content["subject"], content["text"], settings.DEFAULT_FROM_EMAIL,
                                      list(self.config["to"]), headers={"X-Denoise-Delivery": delivery.webhook_id})
        mail.attach_alternative(content["html"], "text/html")
        # The SMTP backend itself, not a configured mailer: the contract promises a
        # message through EMAIL_HOST, and the test runner swaps every mailer for an in-memory one.
        connection = EmailBackend(alias="alerts", timeout=settings.WEBHOOK_TIMEOUT_SECONDS, **settings.ALERT_SMTP)
        try:
            connection.send_messages([mail])
        except smtplib.SMTPRecipientsRefused as error:
            refused = ", ".join(sorted(error.recipients))
            raise TransportError(f"the SMTP server refused every recipient: {refused}", permanent=True) from None
        except smtplib.SMTPResponseException as error:
            reply = error.smtp_error.decode("utf-8", "replace") if isinstance(error.smtp_error, bytes) else str(
                error.smtp_error)
            # 5xx replies are permanent failures in SMTP; 4xx mean "try later".
            raise TransportError(f"SMTP {error.smtp_code}: {reply}", permanent=error.smtp_code >= 500,
                                 status_code=error.smtp_code, response_excerpt=reply[:1000]) from None
        except (smtplib.SMTPException, OSError) as error:
            raise TransportError(f"{type(error).__name__}: {error}") from None
        server = f"{settings.ALERT_SMTP['host']}:{settings.ALERT_SMTP['port']}"
        return Sent(status_code=250, response_excerpt=f"accepted by {server} for {len(mail.to)} recipient(s)")
