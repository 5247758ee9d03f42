"""Pure scoring core: normalization, per-line scores, bank summaries and the statistics behind them, and the
mechanical comparison and labels of a full-call run's lines.

No Django here. Everything returns frozen dataclasses and is tested without a database.

Normalization (version "1"), in this order:
1. Unicode NFC, then lowercase (str.lower, not casefold: "ß" stays "ß").
2. Every character in a Unicode punctuation (P*) or symbol (S*) category becomes a space, and so does
   every control character (Cc), every whitespace character (tabs, no-break spaces...) and the invisible
   ZERO WIDTH SPACE and BYTE ORDER MARK. So "twenty-one" equals "twenty one", and "$", "%", "&", "+",
   "@" and emoji are all spaces. Other invisible format characters (soft hyphen, joiners) are kept.
3. Apostrophes: ASCII "'", typographic "’" (U+2019) and "ʼ" (U+02BC) are the same apostrophe. One with a
   word character on both sides stays, written "'" ("don't", "o'brien"); any other (a quote around a
   word, a doubled apostrophe) is punctuation and becomes a space.
4. Whitespace collapses to single spaces and is stripped at both ends.
Nothing else changes: letters of any script, combining marks, digits and other numbers stay as they are,
so "830" is not "eight thirty". The categories come from the running Python's Unicode database; a
character assigned in a newer Unicode version may be classified differently by an older Python.
Bump NORMALIZER_VERSION whenever any of this changes: every stored score records it.

No text: a transcriber whose text has no words after normalization (empty, whitespace, only punctuation) failed
on that item, exactly like a vendor error: `failure_of` names the reason (NO_TEXT or ERROR), the item is counted
under failed lines and left out of scored lines, accuracy and mean WER.

Exact comparisons. The numbers decide which transcriber callers get, so ties are decided in integers:
- Mean WER. Each line's WER is also held as an integer, `wer_units` = WER * WER_SCALE rounded half up, with
  WER_SCALE = 5,354,228,880, the least common multiple of 1..24: the WER of every line of up to 24 expected
  words is exact (a line of more words is rounded by less than 1 / (2 * WER_SCALE)). A candidate's mean WER is
  then (sum of wer_units) / (scored * WER_SCALE); the sum is an integer the database adds up exactly (a bigint,
  stored on every score) and this module adds up the same way, so the two paths give the same rows. Two
  means are compared by cross-multiplying integer sums and counts, never in floating point: 2/20 and 4/20
  tie with 3/20 and 3/20. A bigint holds the sum of about 1.7 billion lines of WER 1.
- Accuracy: matches / scored compared as fractions (cross-multiplied integers).
- Threshold: a fraction given exactly (a Decimal such as 0.702, an int, a Fraction; a float is read by its
  shortest decimal form, so 0.1 is 1/10), compared as matches * denominator >= numerator * scored.
"""

import math
import re
import string
import unicodedata
import zlib
from collections.abc import Container, Hashable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from fractions import Fraction

from rapidfuzz.distance import Levenshtein

NORMALIZER_VERSION = "1"

WER_SCALE = 5_354_228_880  # math.lcm(*range(1, 25)): a line's WER in units of 1 / WER_SCALE
ERROR = "error"  # the transcriber failed (a vendor error, unreadable audio): no text came back
NO_TEXT = "no text"  # its text came back with no words after normalization

_APOSTROPHES = "'\u2019\u02bc"
_EXTRA_SPACES = "\u200b\ufeff"  # zero width space, byte order mark: invisible, so treated as spaces

# One bytes.translate handles the ASCII characters, on the UTF-8 bytes of any text (the bytes of a
# non-ASCII character are all >= 128, so the table leaves them alone): capitals become lowercase;
# punctuation, symbols and control characters become spaces (string.punctuation is exactly the ASCII P* and
# S* characters, and every ASCII whitespace character is a control character or the space); the apostrophe
# is kept for the in-word check.
_ASCII_SPACES = string.punctuation.replace("'", "") + "".join(map(chr, range(32))) + "\x7f"
_ASCII_TABLE = bytes.maketrans(
    (string.ascii_uppercase + _ASCII_SPACES).encode(),
    (string.ascii_lowercase + " " * len(_ASCII_SPACES)).encode(),
)
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
# An apostrophe at the start or end of the text, or next to a space or another apostrophe.
_LOOSE_APOSTROPHE = re.compile(r"(?<![^ '])'|'(?![^ '])")


def _unicode_char(c: str) -> str:
    """What a non-ASCII character becomes."""
    if c in _APOSTROPHES:
        return "'"
    if c.isspace() or c in _EXTRA_SPACES:
        return " "
    category = unicodedata.category(c)
    if category[0] in "PS" or category == "Cc":
        return " "
    return c


def _words(text: str) -> list[str]:
    """The normalized text as a list of words."""
    if not text.isascii():
        text = unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).lower())
        for c in set(_NON_ASCII.findall(text)):
            replacement = _unicode_char(c)
            if replacement != c:
                text = text.replace(c, replacement)
    text = text.encode("utf-8", "surrogatepass").translate(_ASCII_TABLE).decode("utf-8", "surrogatepass")
    # Every whitespace character is a space by now, so most texts rule out a loose apostrophe cheaply.
    if "'" in text and (" '" in text or "' " in text or "''" in text or text[0] == "'" or text[-1] == "'"):
        text = _LOOSE_APOSTROPHE.sub(" ", text)
    return text.split()


def normalize(text: str) -> str:
    """The text as it is compared: see the module docstring for the rules."""
    return " ".join(_words(text))


def words(text: str) -> list[str]:
    """The normalized text's words, as WER counts them."""
    return _words(text)


def ascii_in_place(text: str) -> str | None:
    """An ASCII text with its normalization applied in place: capitals lowercased, punctuation, symbols, control
    characters and loose apostrophes turned into spaces, every other character where it was, so the words of
    `words(text)` are its runs of non-spaces, at their offsets in `text`. None for a text that is not ASCII."""
    if not text.isascii():
        return None
    text = text.encode().translate(_ASCII_TABLE).decode()
    return _LOOSE_APOSTROPHE.sub(" ", text) if "'" in text else text


def edit_ops(reference: list[str], hypothesis: list[str]):
    """The word-level edits that turn the reference's words into the hypothesis's (rapidfuzz's Levenshtein
    editops): the one alignment WER counts, and the one the turn table marks (alignment.py)."""
    return Levenshtein.editops(reference, hypothesis)


def has_words(text: str | None) -> bool:
    """True when the text has at least one word after normalization."""
    return bool(text) and bool(_words(text))


REPETITION_RATIO = (
    2.4  # Whisper's own test of a repetition loop: the text's bytes over their zlib-compressed size
)
WORDS_PER_SECOND = 6.0  # more than a caller says in a second (fast speech is about 4)


def degenerate(text: str | None, seconds: float | None = None) -> str:
    """Why a live transcript cannot stand as an expected text (a control line's): it has no words, it repeats
    itself (a short n-gram over and over: compression ratio over REPETITION_RATIO, Whisper's own limit), or it
    has more words than the line's `seconds` allow (over WORDS_PER_SECOND); "" when none of these."""
    found = _words(text or "")
    if not found:
        return "it has no words"
    raw = text.encode("utf-8", "surrogatepass")
    ratio = len(raw) / len(zlib.compress(raw))
    if ratio > REPETITION_RATIO:
        return f"it repeats itself (compression ratio {ratio:.1f}, over {REPETITION_RATIO})"
    if seconds and len(found) / seconds > WORDS_PER_SECOND:
        return (
            f"{len(found)} words in {seconds:.1f} s is more than a caller says (over {WORDS_PER_SECOND:.0f} a "
            "second)"
        )
    return ""


def failure_of(hypothesis: str | None) -> str:
    """Why a transcriber's text fails on an item: ERROR when it gave none (None), NO_TEXT when it has no words
    after normalization; "" when it can be scored."""
    if hypothesis is None:
        return ERROR
    return "" if has_words(hypothesis) else NO_TEXT


def wer_units(errors: int, reference_words: int) -> int:
    """errors / reference_words in units of 1 / WER_SCALE, rounded half up (exact up to 24 reference words)."""
    if reference_words <= 0 or errors < 0:
        raise ValueError(f"Need errors >= 0 and reference_words > 0, got {errors} and {reference_words}.")
    return (2 * errors * WER_SCALE + reference_words) // (2 * reference_words)


def _collapse_whitespace(text: str) -> str:
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    return " ".join(text.split())


@dataclass(frozen=True, slots=True)
class LineScore:
    """One transcriber's text on one line, scored against the expected text.

    `wer` is (substitutions + deletions + insertions) / reference_words and can exceed 1.
    `case_or_punctuation_only` is true on a match whose raw texts differ in capitals or punctuation
    (differences in whitespace or Unicode form alone do not count)."""

    match: bool
    wer: float
    case_or_punctuation_only: bool
    substitutions: int
    deletions: int
    insertions: int
    reference_words: int
    hypothesis_words: int  # 0: the text had no words, a failed line ("no text") wherever it is summed

    @property
    def wer_units(self) -> int:
        """The WER as an integer number of 1 / WER_SCALE: what mean WERs are summed and compared from."""
        return wer_units(self.substitutions + self.deletions + self.insertions, self.reference_words)


def score_line(expected: str, hypothesis: str) -> LineScore:
    """Score `hypothesis` against `expected`. Raises ValueError when `expected` has no words."""
    reference = _words(expected)
    if not reference:
        raise ValueError("The expected text is empty: it must contain at least one word.")
    words = _words(hypothesis)
    reference_words = len(reference)
    if reference == words:
        noted = expected != hypothesis and _collapse_whitespace(expected) != _collapse_whitespace(hypothesis)
        return LineScore(True, 0.0, noted, 0, 0, 0, reference_words, len(words))
    if not words:
        return LineScore(False, 1.0, False, 0, reference_words, 0, reference_words, 0)
    substitutions = deletions = insertions = 0
    for tag, _, _ in edit_ops(reference, words).as_list():
        if tag == "replace":
            substitutions += 1
        elif tag == "delete":
            deletions += 1
        else:
            insertions += 1
    wer = (substitutions + deletions + insertions) / reference_words
    return LineScore(False, wer, False, substitutions, deletions, insertions, reference_words, len(words))


@dataclass(frozen=True, slots=True)
class Outcome:
    """A candidate's result on one line. `score` is None when the transcriber failed with an error; a score of a
    text with no words (`hypothesis_words == 0`) is a failure too ("no text")."""

    candidate: str
    line_id: Hashable
    score: LineScore | None

    @property
    def failed(self) -> bool:
        return self.score is None or self.score.hypothesis_words == 0


def outcome(candidate: str, line_id: Hashable, expected: str, hypothesis: str | None) -> Outcome:
    """A transcriber's text on one line as an Outcome: failed (score None) when `failure_of` gives a reason."""
    if failure_of(hypothesis):
        return Outcome(candidate, line_id, None)
    return Outcome(candidate, line_id, score_line(expected, hypothesis))


@dataclass(frozen=True, slots=True)
class CandidateSummary:
    """`accuracy` = matches / scored, a fraction; `failed` lines are errors left out of the division.
    `wer_units` is the exact sum of the scored lines' WERs in units of 1 / WER_SCALE; `mean_wer` is
    wer_units / (scored * WER_SCALE), for display. `accuracy` and `mean_wer` are None when nothing was scored.
    Build one with `summary_row`, from counts the pure core or the database summed."""

    candidate: str
    scored: int
    matches: int
    failed: int
    accuracy: float | None
    mean_wer: float | None
    wer_units: int = 0
    # Of `scored` and `matches`, those on control lines; the rest are on flagged lines. Where a lead comes from:
    # flagged lines fixed (matches on lines the live transcriber got wrong) and control lines kept (matches on
    # lines whose expected text is the live transcript).
    control_scored: int = 0
    control_matches: int = 0

    @property
    def flags_scored(self) -> int:
        return self.scored - self.control_scored

    @property
    def flags_fixed(self) -> int:
        return self.matches - self.control_matches

    @property
    def controls_kept(self) -> int:
        return self.control_matches


def summary_row(
    candidate,
    scored: int,
    matches: int,
    failed: int,
    wer_units: int,
    control_scored: int = 0,
    control_matches: int = 0,
) -> CandidateSummary:
    """A summary row from its integer counts and WER sum: the one place a candidate's accuracy and mean WER are
    derived (a week's accuracy on the trend chart is WeekPoint's, from its own counts)."""
    return CandidateSummary(
        candidate=candidate,
        scored=scored,
        matches=matches,
        failed=failed,
        accuracy=matches / scored if scored else None,
        mean_wer=wer_units / (scored * WER_SCALE) if scored else None,
        wer_units=wer_units,
        control_scored=control_scored,
        control_matches=control_matches,
    )


FLAGS, CONTROLS = "flags", "controls"


def lead_from(leader: CandidateSummary, runner_up: CandidateSummary) -> str:
    """Which part of the lines alone carries the leader's lead over the runner-up: FLAGS when it fixed more flagged
    lines and kept no more control lines, CONTROLS when it kept more control lines and fixed no more flagged ones;
    "" when both parts carry it, or neither."""
    flags = leader.flags_fixed - runner_up.flags_fixed
    controls = leader.controls_kept - runner_up.controls_kept
    if controls > 0 and flags <= 0:
        return CONTROLS
    if flags > 0 and controls <= 0:
        return FLAGS
    return ""


@dataclass(frozen=True, slots=True)
class BankSummary:
    rows: tuple[CandidateSummary, ...]
    leader: str | None
    leader_clears_threshold: bool
    threshold: Fraction
    runner_up: str | None = None


def exact_threshold(threshold) -> Fraction:
    """The threshold as an exact fraction between 0 and 1 (ValueError otherwise). A Decimal, int, Fraction or
    decimal string is taken as written; a float by its shortest decimal form (0.1 is 1/10, not the binary
    number nearest to it)."""
    if isinstance(threshold, float):
        if not math.isfinite(threshold):
            raise ValueError(f"The threshold is a fraction between 0 and 1, got {threshold!r}.")
        threshold = repr(threshold)
    if isinstance(threshold, Decimal) and not threshold.is_finite():
        raise ValueError(f"The threshold is a fraction between 0 and 1, got {threshold!r}.")
    value = Fraction(threshold)
    if not 0 <= value <= 1:
        raise ValueError(f"The threshold is a fraction between 0 and 1, got {threshold!s}.")
    return value


def clears(matches: int, scored: int, threshold) -> bool:
    """matches / scored >= threshold, compared in integers; False when nothing was scored."""
    t = exact_threshold(threshold)
    return scored > 0 and matches * t.denominator >= t.numerator * scored


def summarize(
    outcomes: Iterable[Outcome], candidates: Sequence[str], threshold, controls: Container = frozenset()
) -> BankSummary:
    """One row per candidate in the order given, and the leader.

    Leader: highest accuracy, ties to the lower mean WER, then to the candidate listed first; None when
    no candidate has a scored line. It clears the threshold (a fraction, 0.6 for 60%) when its accuracy
    is at or above it. Every comparison is exact (see the module docstring). Outcomes for candidates not
    listed are ignored. `controls`: the line ids that are control lines (their part of the counts is kept
    apart: where a lead comes from)."""
    exact_threshold(threshold)
    if len(set(candidates)) != len(candidates):
        raise ValueError("Each candidate may be listed only once.")
    scored = dict.fromkeys(candidates, 0)
    matches = dict.fromkeys(candidates, 0)
    failed = dict.fromkeys(candidates, 0)
    units = dict.fromkeys(candidates, 0)
    control_scored = dict.fromkeys(candidates, 0)
    control_matches = dict.fromkeys(candidates, 0)
    for o in outcomes:
        if o.candidate not in scored:
            continue
        if o.failed:
            failed[o.candidate] += 1
            continue
        scored[o.candidate] += 1
        matches[o.candidate] += o.score.match
        units[o.candidate] += o.score.wer_units
        if o.line_id in controls:
            control_scored[o.candidate] += 1
            control_matches[o.candidate] += o.score.match
    rows = [
        summary_row(
            name,
            scored[name],
            matches[name],
            failed[name],
            units[name],
            control_scored[name],
            control_matches[name],
        )
        for name in candidates
    ]
    return rank(rows, threshold)


def rank(rows: Sequence[CandidateSummary], threshold) -> BankSummary:
    """Leader and runner-up of rows already summed (in the candidates' order), e.g. by a database query.

    Highest accuracy first, ties to the lower mean WER, then to the row listed first: accuracy and mean WER
    are compared as exact fractions of the rows' integer counts and WER sums."""
    threshold = exact_threshold(threshold)
    ranked = sorted(
        (Fraction(-row.matches, row.scored), Fraction(row.wer_units, row.scored), position)
        for position, row in enumerate(rows)
        if row.scored
    )
    if not ranked:
        return BankSummary(tuple(rows), None, False, threshold)
    best = rows[ranked[0][2]]
    runner_up = rows[ranked[1][2]].candidate if len(ranked) > 1 else None
    return BankSummary(
        tuple(rows), best.candidate, clears(best.matches, best.scored, threshold), threshold, runner_up
    )


def wilson_interval(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float] | None:
    """Wilson score interval for a proportion (95% by default); None when n == 0."""
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"Need 0 <= successes <= n, got successes={successes}, n={n}.")
    if n == 0:
        return None
    p = successes / n
    z2 = z * z
    denominator = 1 + z2 / n
    center = (p + z2 / (2 * n)) / denominator
    half_width = z / denominator * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    low = 0.0 if successes == 0 else max(0.0, center - half_width)
    high = 1.0 if successes == n else min(1.0, center + half_width)
    return (low, high)


TRUST_MIN_LINES = 30  # a figure on fewer scored lines is provisional
TRUST_MAX_HALF_WIDTH = 0.15  # ... and so is one whose 95% interval is wider than ±15 points
TRUST_RULE = f"at least {TRUST_MIN_LINES} scored lines and a 95% interval within ±{TRUST_MAX_HALF_WIDTH * 100:.0f} points"


def too_few_to_trust(matches: int, scored: int) -> bool:
    """Whether an accuracy rests on too few lines to trust as a leader's: fewer than TRUST_MIN_LINES scored lines,
    or a 95% Wilson interval wider than ±TRUST_MAX_HALF_WIDTH (at 50% accuracy that takes about 43 lines)."""
    if scored < TRUST_MIN_LINES:
        return True
    low, high = wilson_interval(matches, scored)
    return (high - low) / 2 > TRUST_MAX_HALF_WIDTH


EXACT_MCNEMAR_UP_TO = 2000  # discordant pairs summed in integers; beyond, the binomial CDF in floating point


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test of b successes in b + c trials with p = 1/2.

    Up to EXACT_MCNEMAR_UP_TO discordant pairs it is computed in integers and divided once, so it is exact up to
    the final rounding: each binomial coefficient comes from the previous one (C(n, i+1) = C(n, i) * (n - i) /
    (i + 1)). Beyond, those integers grow to n bits and the sum costs seconds on a large bank (0.3 s at 65,000
    pairs, 3 s at 200,000), so the same binomial tail comes from scipy's binomial CDF (Boost's regularized
    incomplete beta), to about thirteen significant digits, in microseconds whatever n."""
    if b < 0 or c < 0:
        raise ValueError(f"Discordant counts must be non-negative, got b={b}, c={c}.")
    n = b + c
    if n == 0:
        return 1.0
    if n > EXACT_MCNEMAR_UP_TO:
        from scipy.stats import binom

        return min(1.0, 2 * float(binom.cdf(min(b, c), n, 0.5)))
    term = tail = 1  # C(n, 0)
    for i in range(min(b, c)):
        term = term * (n - i) // (i + 1)
        tail += term
    return min(1.0, 2 * tail / (1 << n))


@dataclass(frozen=True, slots=True)
class WeekPoint:
    """One week of a candidate's scored lines: the seven days first_day..last_day, both included."""

    first_day: date
    last_day: date
    scored: int
    matches: int

    @property
    def accuracy(self) -> float | None:
        return self.matches / self.scored if self.scored else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson_interval(self.matches, self.scored)


def weekly(days: Iterable[tuple[date, int, int]], last_day: date, weeks: int) -> list[WeekPoint]:
    """Counts per day, (day, scored, matches), summed into `weeks` weeks of seven days that end on `last_day`,
    oldest first. A week with no day keeps its place with nothing scored; days outside the weeks are left out."""
    scored, matches = [0] * weeks, [0] * weeks
    for day, n, m in days:
        back = (last_day - day).days // 7  # 0: the week that ends on last_day
        if 0 <= (last_day - day).days and back < weeks:
            scored[weeks - 1 - back] += n
            matches[weeks - 1 - back] += m
    return [
        WeekPoint(
            last_day - timedelta(days=7 * (weeks - i) - 1),
            last_day - timedelta(days=7 * (weeks - 1 - i)),
            scored[i],
            matches[i],
        )
        for i in range(weeks)
    ]


@dataclass(frozen=True, slots=True)
class LeadTest:
    """Leader against runner-up on the lines both have scored. `clear` when the leader is right on more of
    the lines where exactly one of them is right and the exact McNemar p-value is below alpha."""

    both_scored: int
    leader_only_right: int
    runner_up_only_right: int
    p_value: float
    clear: bool


def compare_leader(outcomes: Iterable[Outcome], leader: str, runner_up: str, alpha: float = 0.05) -> LeadTest:
    """Pair the two candidates' scored lines by line_id and test whether the leader's lead is clear."""
    if leader == runner_up:
        raise ValueError("The leader and the runner-up must be different candidates.")
    by_candidate: dict[str, dict[Hashable, bool]] = {leader: {}, runner_up: {}}
    for outcome in outcomes:
        lines = by_candidate.get(outcome.candidate)
        if lines is None or outcome.failed:
            continue
        if outcome.line_id in lines:
            raise ValueError(f"Line {outcome.line_id!r} is scored twice for {outcome.candidate!r}.")
        lines[outcome.line_id] = outcome.score.match
    leader_lines, runner_up_lines = by_candidate[leader], by_candidate[runner_up]
    both = leader_lines.keys() & runner_up_lines.keys()
    leader_only = sum(1 for line in both if leader_lines[line] and not runner_up_lines[line])
    runner_up_only = sum(1 for line in both if runner_up_lines[line] and not leader_lines[line])
    return lead_test(len(both), leader_only, runner_up_only, alpha)


def lead_test(both_scored: int, leader_only: int, runner_up_only: int, alpha: float = 0.05) -> LeadTest:
    """The exact McNemar test from the counts of the lines both scored and of those only one got right."""
    p_value = mcnemar_exact(leader_only, runner_up_only)
    return LeadTest(
        both_scored=both_scored,
        leader_only_right=leader_only,
        runner_up_only_right=runner_up_only,
        p_value=p_value,
        clear=leader_only > runner_up_only and p_value < alpha,
    )


# ---------------------------------------------------------------- full-call runs: a candidate's line beside the live one

# The labels of a run's lines (RunLine.label): the mechanical ones below, or the judge's on lines nobody flagged.
CANDIDATE_RIGHT = "candidate_right"  # a fix: the candidate has what was said, the live transcript does not
LIVE_RIGHT = "live_right"  # a break: the live transcript has it, the candidate does not
SAME_MEANING = "same_meaning"
BOTH_WRONG = "both_wrong"


@dataclass(frozen=True, slots=True)
class LineComparison:
    differs: bool  # normalized candidate and live texts differ
    label: str  # set only on a flagged line (mechanical); "" where the judge decides or nothing differs
    candidate_match: bool | None = None  # flagged lines only: against what was said
    live_match: bool | None = None
    candidate_wer: float | None = None
    live_wer: float | None = None


def mechanical_label(candidate_match: bool, live_match: bool) -> str:
    """The label of a flagged line, from the two scores against what was said.

    candidate matches and live does not: candidate_right; live matches and candidate does not: live_right;
    neither: both_wrong. Both match: same_meaning; both then equal what was said after normalization,
    so they equal each other and the line is neither a fix nor a break."""
    if candidate_match and not live_match:
        return CANDIDATE_RIGHT
    if live_match and not candidate_match:
        return LIVE_RIGHT
    if candidate_match and live_match:
        return SAME_MEANING
    return BOTH_WRONG


def compare_line(live_text: str, candidate_text: str, expected: str | None = None) -> LineComparison:
    """Compare a candidate's text with the live transcript; with `expected` (a flag), score both and label."""
    differs = normalize(live_text) != normalize(candidate_text)
    if not expected or not normalize(expected):
        return LineComparison(differs=differs, label="")
    cand = score_line(expected, candidate_text)
    live = score_line(expected, live_text)
    return LineComparison(
        differs, mechanical_label(cand.match, live.match), cand.match, live.match, cand.wer, live.wer
    )
