"""Longest run of fused nodes, composable across consecutive pieces of a sequence.

A piece of an agent's node sequence is summed up by its length, the fused run
it starts with, the one it ends with and the longest inside; two consecutive
pieces combine without looking at their nodes again, which is what lets hour
rollups and recent rows be stitched together in time order.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Run:
    length: int = 0
    prefix: int = 0
    suffix: int = 0
    best: int = 0

    @classmethod
    def of(cls, fused_flags) -> "Run":
        run = cls()
        for fused in fused_flags:
            run = run.then(ONE_FUSED if fused else ONE_CLEAR)
        return run

    def then(self, later: "Run") -> "Run":
        if not self.length:
            return later
        if not later.length:
            return self
        prefix = self.prefix if self.prefix < self.length else self.length + later.prefix
        suffix = later.suffix if later.suffix < later.length else later.length + self.suffix
        return Run(self.length + later.length, prefix, suffix, max(self.best, later.best, self.suffix + later.prefix))


ONE_FUSED = Run(1, 1, 1, 1)
ONE_CLEAR = Run(1, 0, 0, 0)


def longest(pieces_by_agent: dict) -> int:
    """pieces_by_agent: agent -> [(sort key, Run)]; the longest run over agents."""
    best = 0
    for pieces in pieces_by_agent.values():
        run = Run()
        for _, piece in sorted(pieces, key=lambda item: item[0]):
            run = run.then(piece)
        best = max(best, run.best)
    return best
