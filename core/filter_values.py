"""What a value typed into an agent, step, source type or model filter means
against the values the project's data holds: the value itself when it is one
of them, else every value that starts with it, case ignored. When it starts
none, the closest values are named instead, for the page to offer.

Pages filter by what this resolves (several values: any of them); the alert
rule builder stores only a single exact value, as the API does."""

import difflib
from collections.abc import Iterable
from dataclasses import dataclass

CLOSEST = 3


@dataclass(frozen=True)
class Resolved:
    typed: str
    values: tuple[str, ...] = ()
    closest: tuple[str, ...] = ()

    @property
    def unmatched(self) -> bool:
        return bool(self.typed) and not self.values

    @property
    def widened(self) -> bool:
        """The typed text was not a value itself but stands for the values it starts."""
        return bool(self.values) and self.values != (self.typed,)

    @property
    def filter_value(self) -> str | tuple[str, ...]:
        """What to filter by: one value as itself, several as a tuple. Unmatched,
        the typed text, which matches only a value the known ones missed."""
        if len(self.values) > 1:
            return self.values
        return self.values[0] if self.values else self.typed


def resolve(typed: str, known: Iterable) -> Resolved:
    known = sorted({str(value) for value in known if value not in (None, "")})
    if not typed:
        return Resolved("")
    if typed in known:
        return Resolved(typed, (typed,))
    folded = typed.casefold()
    values = tuple(value for value in known if value.casefold().startswith(folded))
    if values:
        return Resolved(typed, values)
    return Resolved(typed, (), closest(folded, known))


def closest(folded: str, known: list[str]) -> tuple[str, ...]:
    """Values holding the typed text first, then the most alike."""
    holding = [value for value in known if folded in value.casefold()]
    by_folded = {value.casefold(): value for value in known}
    # Similarity of a long paste to short ids means nothing and costs much: compare the start only.
    alike = difflib.get_close_matches(folded[:100], list(by_folded), n=CLOSEST, cutoff=0.4)
    return tuple(dict.fromkeys([*holding, *(by_folded[value] for value in alike)]))[:CLOSEST]
