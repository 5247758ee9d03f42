"""Time score_line against a plain jiwer.wer loop on the same short phone lines.

Builds deterministic line pairs (5-15 words, the kind of thing a caller says to a restaurant) with a
realistic mix of exact copies, capital/punctuation-only differences, misheard words, dropped and added
words, and numbers written as digits; a few lines carry accented names and typographic apostrophes.
Both loops run in this one process, on one core.

    .venv/bin/python bench/score_lines.py [--pairs 100000] [--repeat 3] [--seed 20240601]
"""

import argparse
import random
import sys
import time
from pathlib import Path

import jiwer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from transcriber_tests.lib.scoring import normalize, score_line  # noqa: E402

NAMES = [
    "Siobhan",
    "Mary-Kate",
    "O'Brien",
    "Nguyen",
    "Patel",
    "Kowalski",
    "Smith",
    "Okafor",
    "Garcia",
    "Murphy",
]
ACCENTED = ["Siobhán", "José", "Zoë", "Björn", "Renée", "Ng\u2019ang\u2019a"]
NUMBERS = {"two": "2", "four": "4", "six": "6", "eight": "8", "ten": "10", "seven": "7"}
TIMES = {"eight thirty": "830", "seven fifteen": "715", "six o'clock": "6:00", "half past seven": "7:30"}
MISHEARD = {
    "Siobhan": "Shivon",
    "four": "for",
    "two": "to",
    "table": "cable",
    "Friday": "Fryday",
    "booking": "looking",
    "O'Brien": "O Brian",
    "Nguyen": "when",
    "allergy": "allergic",
    "terrace": "terrorist",
    "I'd": "I",
    "don't": "dont",
}
FILLERS = ["um", "uh", "yeah", "so", "like", "please", "actually"]
TEMPLATES = [
    "Hi, I'd like to book a table for {n} at {t} on Friday.",
    "{name}, table for {n} at {t}.",
    "Can I change my booking to {t}, please?",
    "It's under {name}, that's {name} with a {n} person table.",
    "We don't need the terrace, just a quiet table for {n}.",
    "Do you have anything at {t} tomorrow for {n} people?",
    "My name is {name} and I have a nut allergy.",
    "Could you move the booking for {name} to {t} on Saturday?",
    "Yes, that's right, {n} of us at {t}.",
    "No, I said {t}, not earlier, thanks.",
    "Is there parking near the restaurant on Friday night?",
    "I'm calling about the reservation under {name} for {n}.",
]


def make_expected(rng: random.Random) -> str:
    template = rng.choice(TEMPLATES)
    name = rng.choice(ACCENTED) if rng.random() < 0.05 else rng.choice(NAMES)
    text = template.format(n=rng.choice(list(NUMBERS)), t=rng.choice(list(TIMES)), name=name)
    if rng.random() < 0.05:
        text = text.replace("'", "\u2019")
    return text


def make_hypothesis(rng: random.Random, expected: str) -> str:
    roll = rng.random()
    if roll < 0.30:
        return expected
    if roll < 0.45:
        return expected.lower().replace(",", "").replace(".", "").replace("?", "").replace("-", " ")
    text = expected
    for spoken, digits in TIMES.items():
        if spoken in text and rng.random() < 0.5:
            text = text.replace(spoken, digits)
    words = text.split()
    for _ in range(rng.randint(1, 3)):
        position = rng.randrange(len(words))
        action = rng.random()
        word = words[position].strip(",.?!")
        if action < 0.45:
            words[position] = MISHEARD.get(word) or NUMBERS.get(word) or rng.choice(FILLERS)
        elif action < 0.75 and len(words) > 2:
            del words[position]
        else:
            words.insert(position, rng.choice(FILLERS))
    if rng.random() < 0.5:
        return " ".join(words).lower().replace(",", "").replace(".", "")
    return " ".join(words)


def build_pairs(count: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        expected = make_expected(rng)
        pairs.append((expected, make_hypothesis(rng, expected)))
    return pairs


def time_loop(function, pairs) -> tuple[float, float]:
    """(CPU seconds, wall seconds). CPU time is the figure to read on a shared machine: it leaves out the
    time this process waited for a core."""
    cpu, wall = time.process_time(), time.perf_counter()
    for expected, hypothesis in pairs:
        function(expected, hypothesis)
    return time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument(
        "--repeat", type=int, default=1, help="report the best of this many runs of each loop"
    )
    parser.add_argument("--seed", type=int, default=20240601)
    args = parser.parse_args()

    pairs = build_pairs(args.pairs, args.seed)
    word_counts = [len(expected.split()) for expected, _ in pairs]
    scores = [score_line(expected, hypothesis) for expected, hypothesis in pairs]
    matches = sum(score.match for score in scores)
    noted = sum(score.case_or_punctuation_only for score in scores)
    non_ascii = sum(not (expected + hypothesis).isascii() for expected, hypothesis in pairs)
    print(
        f"{len(pairs):,} pairs, {min(word_counts)}-{max(word_counts)} words "
        f"(mean {sum(word_counts) / len(pairs):.1f}); {matches / len(pairs):.1%} match "
        f"({noted / len(pairs):.1%} only in case/punctuation); {non_ascii / len(pairs):.1%} non-ASCII; "
        f"mean WER {sum(score.wer for score in scores) / len(pairs):.3f}"
    )

    # Sanity check: on the same normalized texts, jiwer's error count equals ours.
    sample = pairs[:2000]
    agree = sum(
        abs(score_line(e, h).wer - jiwer.wer(normalize(e), normalize(h) or "<empty>")) < 1e-9
        or not normalize(h)
        for e, h in sample
    )
    print(f"WER equal to jiwer's on the normalized texts: {agree}/{len(sample)}")

    score_cpu, score_wall = min(time_loop(score_line, pairs) for _ in range(args.repeat))
    jiwer_cpu, jiwer_wall = min(time_loop(jiwer.wer, pairs) for _ in range(args.repeat))
    for label, cpu, wall in [("score_line", score_cpu, score_wall), ("jiwer.wer", jiwer_cpu, jiwer_wall)]:
        print(
            f"{label + ':':<12}{len(pairs) / cpu:>10,.0f} pairs/s of CPU time ({cpu:.2f} s); "
            f"{len(pairs) / wall:,.0f} pairs/s wall-clock ({wall:.2f} s)"
        )
    rate = len(pairs) / score_cpu
    print(
        f"score_line is {jiwer_cpu / score_cpu:.1f}x jiwer.wer; "
        f"target 100,000 pairs/s on one core: {'met' if rate >= 100_000 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
