"""A seeded stand-in for an LLM: the outside world the SDK's tools wrap.

Each call's randomness is seeded from the seed and the call's own arguments,
so a vote gives the same answers whatever order its threads or tasks run in.
"""

import asyncio
import random
import threading


class FakeLLM:
    def __init__(self, right, wrong=(), *, seed: int = 7, stray: float = 0.0, delay: float = 0.0):
        self.right, self.wrong = right, list(wrong)
        self.seed, self.stray, self.delay = seed, stray, delay
        self.calls = []
        self._lock = threading.Lock()

    def _answer(self, prompt, temperature, perspective):
        with self._lock:
            self.calls.append({"prompt": prompt, "temperature": temperature, "perspective": perspective})
        rng = random.Random(f"{self.seed}|{prompt}|{temperature}|{perspective}")
        if self.wrong and rng.random() < self.stray * temperature:
            return rng.choice(self.wrong)
        return self.right

    def complete(self, prompt: str = "", temperature: float = 0.7, perspective: str = ""):
        return self._answer(prompt, temperature, perspective)

    async def acomplete(self, prompt: str = "", temperature: float = 0.7, perspective: str = ""):
        await asyncio.sleep(self.delay)
        return self._answer(prompt, temperature, perspective)


def scripted(*answers):
    """A step giving the i-th answer to the i-th call, whatever its variant."""
    lock, calls = threading.Lock(), iter(answers)

    def step(temperature):
        with lock:
            answer = next(calls)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return step
