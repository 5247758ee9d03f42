"""Measure benchmark.codeswitch.langtag's word language tagging on the hand-labelled code-switched set.

    .venv/bin/python scripts/measure_langtag.py [--jsonl fixtures/codeswitch/hand_labelled.jsonl]

The set (fixtures/codeswitch/hand_labelled.jsonl) holds HR / IT-support sentences written for this purpose,
each with the non-English language as the matrix and English spans embedded (EN-ES, EN-FR, EN-DE, 16 each),
one tag per whitespace-separated word. Labelling rules: a word gets the language of the span it belongs to
("mi laptop no" → es en es); digits, ids, names of people and companies and all-capital acronyms get null
(language-independent); loanwords used as ordinary words of the matrix language ("badge" in French,
"E-Mail" in German) get the matrix language. Each line says which half it is in ("split": alternate
lines of each pair are "tune" and "test"); the half was fixed before any tuning.

Each sentence is tagged with its own pair (languages = ["en", matrix]). The script prints, per pair and
half:
- "words": accuracy over every word, counting a null the tagger must also give (null or not null);
- "lang": accuracy over the words labelled with a language only;
for raw word-by-word tags (weights 1.0) and for neighbour smoothing with SMOOTHING_WEIGHTS, then the grid
of smoothing weights on the tune half that the default was picked from (highest tune "lang" accuracy, ties to
the shorter window). Only the test half says how well the chosen weights generalize; 24 sentences is small.
"""

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmark.codeswitch.langtag import SMOOTHING_WEIGHTS, tag_words  # noqa: E402

GRID = [
    (1.0, 0.25),
    (1.0, 0.5),
    (1.0, 1.0),
    (1.0, 0.3, 0.1),
    (1.0, 0.5, 0.25),
    (1.0, 0.75, 0.5),
    (1.0, 1.0, 1.0),
    (1.0, 0.5, 0.25, 0.125),
]


def load(path: Path) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:
        if len(row["text"].split()) != len(row["tags"]):
            raise SystemExit(f"{row['id']}: {len(row['text'].split())} words but {len(row['tags'])} tags")
    return rows


def score(rows: list[dict], weights, languages=None, show=False) -> tuple[int, int, int, int]:
    """(right words, words, right language words, language words). `languages` None: the sentence's pair."""
    right = total = lang_right = lang_total = 0
    for row in rows:
        words = row["text"].split()
        predicted = tag_words(words, languages or ["en", row["matrix"]], weights=weights)
        for word, gold, guess in zip(words, row["tags"], predicted, strict=True):
            right += gold == guess
            total += 1
            if gold is not None:
                lang_right += gold == guess
                lang_total += 1
            if show and gold != guess:
                print(f"  {row['id']} {row['split']:4} {word!r}: labelled {gold}, tagged {guess}")
    return right, total, lang_right, lang_total


def pct(a: int, b: int) -> str:
    return f"{100 * a / b:5.1f}% ({a}/{b})" if b else "    -"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--jsonl",
        type=Path,
        default=Path(__file__).resolve().parents[1] / "fixtures" / "codeswitch" / "hand_labelled.jsonl",
    )
    parser.add_argument("--show", action="store_true", help="list every wrong tag of the smoothed tagger")
    args = parser.parse_args()
    rows = load(args.jsonl)
    started = time.perf_counter()
    pairs = sorted({row["pair"] for row in rows})
    print(
        f"{len(rows)} sentences, {sum(len(r['tags']) for r in rows)} words; default weights {SMOOTHING_WEIGHTS}"
    )
    print(
        f"{'pair':8} {'half':5} {'raw words':>20} {'raw lang':>20} {'smoothed words':>20} {'smoothed lang':>20}"
    )
    for half in ("tune", "test"):
        for pair in [*pairs, "all"]:
            subset = [r for r in rows if r["split"] == half and pair in (r["pair"], "all")]
            raw = score(subset, (1.0,))
            smooth = score(subset, SMOOTHING_WEIGHTS)
            print(
                f"{pair:8} {half:5} {pct(*raw[:2]):>20} {pct(*raw[2:]):>20} "
                f"{pct(*smooth[:2]):>20} {pct(*smooth[2:]):>20}"
            )
    test = [r for r in rows if r["split"] == "test"]
    every = sorted({"en"} | {r["matrix"] for r in rows})
    raw = score(test, (1.0,), languages=every)
    smooth = score(test, SMOOTHING_WEIGHTS, languages=every)
    print(
        f"{'any':8} {'test':5} {pct(*raw[:2]):>20} {pct(*raw[2:]):>20} {pct(*smooth[:2]):>20} "
        f"{pct(*smooth[2:]):>20}   <- pair unknown: every sentence tagged with {every}"
    )
    print(
        "\nSmoothing weights on the tune half (lang accuracy); the default is the best, ties to the shorter:"
    )
    tune = [r for r in rows if r["split"] == "tune"]
    best = None
    for weights in GRID:
        _, _, right, total = score(tune, weights)
        print(f"  {str(weights):28} {pct(right, total)}")
        if best is None or right > best[0] or (right == best[0] and len(weights) < len(best[1])):
            best = (right, weights)
    if best[1] != tuple(SMOOTHING_WEIGHTS):
        print(f"  note: the best on the tune half is {best[1]}, not the default {SMOOTHING_WEIGHTS}")
    if args.show:
        print("\nWrong tags, smoothed, each sentence tagged with its pair:")
        score(rows, SMOOTHING_WEIGHTS, show=True)
    print(f"\n{time.perf_counter() - started:.1f} s (includes loading lingua's models)")


if __name__ == "__main__":
    main()
