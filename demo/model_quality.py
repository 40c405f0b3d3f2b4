"""How noisy the fake LLM is at a given moment (its model quality over time): a slow drift, and incidents.

History (load_demo): retrieval quality drifts down over three days (a stale
index), there was an incident about 39 hours ago, and one is under way in the
last 12 minutes, so the demo alert rules fire as soon as the server runs.
Live traffic (demo_traffic): a gentle wave with an 8-minute degradation in
every half hour, so a live demo trips and resolves alerts on its own.
"""

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta

BASE_NOISE = 0.12
HISTORY = timedelta(days=3)


@dataclass(frozen=True)
class Incident:
    start: datetime
    end: datetime
    extra: float


@dataclass
class HistoryNoise:
    now: datetime
    drift_total: float = 0.08
    incidents: list[Incident] = field(default_factory=list)

    def __post_init__(self):
        if not self.incidents:
            self.incidents = [
                Incident(self.now - timedelta(hours=39, minutes=30), self.now - timedelta(hours=38), 0.45),
                Incident(self.now - timedelta(minutes=12), self.now + timedelta(hours=1), 0.5),
            ]

    @property
    def start(self) -> datetime:
        return self.now - HISTORY

    def drift(self, moment: datetime) -> float:
        progress = (moment - self.start) / HISTORY
        return self.drift_total * min(1.0, max(0.0, progress))

    def noise(self, moment: datetime) -> float:
        extra = sum(i.extra for i in self.incidents if i.start <= moment < i.end)
        return BASE_NOISE + extra

    def in_incident(self, moment: datetime) -> bool:
        return any(i.start <= moment < i.end for i in self.incidents)


class LiveNoise:
    DEGRADED_MINUTES = range(22, 30)  # of every half hour

    def drift(self, moment: datetime) -> float:
        return 0.05

    def noise(self, moment: datetime) -> float:
        minutes = moment.minute + moment.second / 60
        wave = 0.05 * math.sin(2 * math.pi * minutes / 30)
        return BASE_NOISE + wave + (0.5 if self.in_incident(moment) else 0.0)

    def in_incident(self, moment: datetime) -> bool:
        return moment.minute % 30 in self.DEGRADED_MINUTES
