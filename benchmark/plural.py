"""Counts as a person writes them: "1 clip", "2 clips", never "1 clips" or "clip(s)". Pure (no Django); the
template filter `counted` of benchmark_tags writes the same."""


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """counted(1, "clip") -> "1 clip"; counted(2, "clip") -> "2 clips"; counted(2, "utterance was", "utterances
    were") -> "2 utterances were"."""
    return f"{n} {singular if n == 1 else (plural or singular + 's')}"


def listed(items) -> str:
    """["a"] -> "a"; ["a", "b"] -> "a and b"; ["a", "b", "c"] -> "a, b and c"."""
    items = [str(i) for i in items]
    if len(items) < 2:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]
