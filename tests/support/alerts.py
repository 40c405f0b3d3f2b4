"""The alert tests' webhook secret and simulated minutes."""

from datetime import timedelta

from tests.support.events import BASE_TIME

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def at_minute(minute: float):
    return BASE_TIME + timedelta(minutes=minute)
