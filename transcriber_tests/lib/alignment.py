"""Word-level alignment of a transcriber's text against the expected text: which words it substituted, inserted
and deleted, from the very alignment WER counts (scoring.edit_ops on the normalized words), each normalized
word mapped back to the word as written so a person reads the text they typed and the text that came back.

Also what the alignment adds up to: the confusion pairs of one line ("for → four", a deleted "the", an
inserted "uh"), in the compact form a score stores them in (Score.confusions, summed per day by the aggregates),
and a digest of a normalized text, so texts that agree after normalization are found in the database.

Pure: no Django. Everything returns frozen dataclasses or plain values and is tested without a database."""

import json
import re
from dataclasses import dataclass
from hashlib import blake2b
from typing import NamedTuple

from . import scoring

EQUAL = "equal"
SUBSTITUTION = "substitution"
DELETION = "deletion"
INSERTION = "insertion"
KINDS = (SUBSTITUTION, DELETION, INSERTION)
KIND_CODES = {SUBSTITUTION: "s", DELETION: "d", INSERTION: "i"}
CODE_KINDS = {code: kind for kind, code in KIND_CODES.items()}

# A normalized word longer than this is cut to it in a confusion pair (a word is never this long in speech; a
# pasted string can be): the per-day totals key on the pair.
WORD_LIMIT = 64
_RUN = re.compile(r"\S+")


class Step(NamedTuple):
    """One step of an alignment. `expected` and `heard` are the words as written (with the punctuation that
    clings to them), `expected_word` and `heard_word` as compared (normalized); a deletion has no heard word,
    an insertion no expected word."""

    kind: str  # EQUAL, SUBSTITUTION, DELETION or INSERTION
    expected: str
    heard: str
    expected_word: str
    heard_word: str


@dataclass(frozen=True, slots=True)
class Alignment:
    steps: tuple[Step, ...]

    def _count(self, kind: str) -> int:
        return sum(1 for step in self.steps if step.kind == kind)

    @property
    def substitutions(self) -> int:
        return self._count(SUBSTITUTION)

    @property
    def deletions(self) -> int:
        return self._count(DELETION)

    @property
    def insertions(self) -> int:
        return self._count(INSERTION)

    @property
    def reference_words(self) -> int:
        return sum(1 for step in self.steps if step.kind != INSERTION)

    @property
    def errors(self) -> int:
        return sum(1 for step in self.steps if step.kind != EQUAL)


def _split_token(token: str, wanted: list[str]) -> list[str] | None:
    """A whitespace-free piece of text whose normalized words are `wanted` (two or more, "twenty-one"), cut into
    one piece per word, each piece keeping the punctuation that follows it ("twenty-", "one"); None when no cut
    gives back the same words (normalization depending on context across the cut)."""
    pieces, rest = [], token
    for i, word in enumerate(wanted[:-1]):
        best = None
        for cut in range(1, len(rest)):
            if scoring.words(rest[:cut]) == [word] and scoring.words(rest[cut:]) == wanted[i + 1 :]:
                best = cut  # the longest head that is still this word alone: trailing punctuation stays on it
            elif best is not None:
                break
        if best is None:
            return None
        pieces.append(rest[:best])
        rest = rest[best:]
    pieces.append(rest)
    return pieces


def _ascii_written(text: str, compared: str) -> list[tuple[str, str]]:
    """written_words of an ASCII text, from the text with its normalization in place (scoring.ascii_in_place)."""
    out: list[list[str]] = []
    loose = ""
    for m in _RUN.finditer(text):
        start, end = m.span()
        token = m.group()
        found = compared[start:end].split()
        if len(found) == 1:
            out.append([token, found[0]])
        elif not found:  # a piece with no word of its own
            if out:
                out[-1][0] += " " + token
            else:
                loose += token + " "
        else:  # "twenty-one": one piece per word, from where it starts to where the next one does
            starts = [w.start() for w in _RUN.finditer(compared, start, end)]
            starts[0] = start
            for i, word in enumerate(found):
                out.append([text[starts[i] : starts[i + 1] if i + 1 < len(starts) else end], word])
    if loose and out:
        out[0][0] = loose + out[0][0]
    return [(written, word) for written, word in out]


def written_words(text: str) -> list[tuple[str, str]]:
    """The text's normalized words, each with the word as written: [(written, normalized)], in order. A piece
    with no words of its own (a dash between spaces) clings to the word before it, or to the first word. Where
    normalization cannot be cut back to the written text, a word is shown as compared."""
    compared = scoring.ascii_in_place(text)
    if compared is not None:
        return _ascii_written(text, compared)
    normalized = scoring.words(text)
    out: list[list[str]] = []
    loose = ""  # punctuation before the first word
    for token in text.split():
        found = scoring.words(token)
        if not found:
            if out:
                out[-1][0] += " " + token
            else:
                loose += token + " "
            continue
        pieces = [token] if len(found) == 1 else _split_token(token, found)
        if pieces is None:
            pieces = found
        for piece, word in zip(pieces, found, strict=True):
            out.append([piece, word])
    if [word for _, word in out] != normalized:  # context across whitespace: show the words as compared
        return [(word, word) for word in normalized]
    if loose and out:
        out[0][0] = loose + out[0][0]
    return [(written, word) for written, word in out]


def align(expected: str, hypothesis: str) -> Alignment:
    """The alignment of `hypothesis` against `expected`, from the edits WER counts: its substitutions,
    deletions and insertions are those of scoring.score_line on the same texts. A text with no words aligns as
    every expected word deleted. Raises ValueError when `expected` has no words."""
    reference = written_words(expected)
    if not reference:
        raise ValueError("The expected text is empty: it must contain at least one word.")
    heard = written_words(hypothesis or "")
    ref_words = [w for _, w in reference]
    hyp_words = [w for _, w in heard]
    if ref_words == hyp_words:
        return Alignment(
            tuple(Step(EQUAL, r, h, rw, hw) for (r, rw), (h, hw) in zip(reference, heard, strict=True))
        )
    if not hyp_words:
        return Alignment(tuple(Step(DELETION, r, "", rw, "") for r, rw in reference))
    steps = []
    for tag, i1, i2, j1, j2 in scoring.edit_ops(ref_words, hyp_words).as_opcodes():
        if tag in ("equal", "replace"):
            kind = EQUAL if tag == "equal" else SUBSTITUTION
            for (r, rw), (h, hw) in zip(reference[i1:i2], heard[j1:j2], strict=True):
                steps.append(Step(kind, r, h, rw, hw))
        elif tag == "delete":
            steps += [Step(DELETION, r, "", rw, "") for r, rw in reference[i1:i2]]
        else:
            steps += [Step(INSERTION, "", h, "", hw) for h, hw in heard[j1:j2]]
    return Alignment(tuple(steps))


# ---------------------------------------------------------------- confusion pairs


def _cut(word: str) -> str:
    return word[:WORD_LIMIT]


def confusions(expected: str, hypothesis: str) -> list[tuple[str, str, str]]:
    """The line's confusion pairs in order: (kind, expected word, heard word), normalized, "" for the missing
    side of a deletion or an insertion; those of `align` on the same texts. A match has none."""
    reference, heard = scoring.words(expected), scoring.words(hypothesis or "")
    if reference == heard:
        return []
    if not heard:
        return [(DELETION, _cut(w), "") for w in reference]
    out = []
    for tag, i, j in scoring.edit_ops(reference, heard).as_list():
        if tag == "replace":
            out.append((SUBSTITUTION, _cut(reference[i]), _cut(heard[j])))
        elif tag == "delete":
            out.append((DELETION, _cut(reference[i]), ""))
        else:
            out.append((INSERTION, "", _cut(heard[j])))
    return out


def pair_token(kind: str, expected_word: str, heard_word: str) -> str:
    """One confusion pair as Score.confusions holds it: "s:for>four", "d:the>", "i:>uh". Normalized words never
    hold ":", ">" or a space (punctuation and symbols become spaces), so the form cannot be ambiguous."""
    return f"{KIND_CODES[kind]}:{_cut(expected_word)}>{_cut(heard_word)}"


def encode_confusions(pairs) -> str:
    """A line's pairs as stored: each token between spaces (" s:for>four d:the> "), so one pair is found with a
    plain `contains` of " token "; "" for none."""
    return f" {' '.join(pair_token(*p) for p in pairs)} " if pairs else ""


def decode_confusions(stored: str) -> list[tuple[str, str, str]]:
    """The pairs of a stored Score.confusions, in order (a pair repeated on the line is listed as often)."""
    out = []
    for token in (stored or "").split():
        code, _, words = token.partition(":")
        expected_word, _, heard_word = words.partition(">")
        out.append((CODE_KINDS[code], expected_word, heard_word))
    return out


def parse_pair(text: str) -> tuple[str, str, str] | None:
    """A pair as a link or an API call names it ("s:for>four"), checked; None when it is not one."""
    try:
        (pair,) = decode_confusions(text)
    except (KeyError, ValueError):
        return None
    kind, expected_word, heard_word = pair
    if pair_token(*pair) != text.strip():
        return None
    if (kind == DELETION) != (heard_word == "") or (kind == INSERTION) != (expected_word == ""):
        return None
    if kind == SUBSTITUTION and (not expected_word or not heard_word or expected_word == heard_word):
        return None
    if any(word and scoring.words(word) != [word] for word in (expected_word, heard_word)):
        return None  # not a word as compared: capitals, punctuation
    return pair


def text_key(text: str) -> int:
    """A signed 64-bit digest of the normalized text: two texts that read the same after normalization share
    it, so agreeing transcribers are found with an equality in the database."""
    digest = blake2b(scoring.normalize(text).encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def has_words(text: str | None) -> bool:
    """Whether a text has a word to align (scoring.has_words)."""
    return scoring.has_words(text)


# ---------------------------------------------------------------- the alignment a score keeps

STEP_CODES = {EQUAL: "=", SUBSTITUTION: "s", DELETION: "d", INSERTION: "i"}
CODE_STEPS = {code: kind for kind, code in STEP_CODES.items()}


def encode_steps(found: Alignment) -> str:
    """An alignment as a score keeps it (Score.alignment), worked out once when the score is written so no page,
    CSV or API answer aligns texts when it is read: a JSON list of [code, expected as written, heard as written],
    the code one of "=", "s", "d", "i"."""
    return json.dumps(
        [[STEP_CODES[s.kind], s.expected, s.heard] for s in found.steps],
        ensure_ascii=False,
        separators=(",", ":"),
    )


def decode_steps(stored: str) -> list[tuple[str, str, str]]:
    """The (kind, expected as written, heard as written) steps of a stored alignment, in order; [] for none."""
    if not stored:
        return []
    return [(CODE_STEPS[code], expected, heard) for code, expected, heard in json.loads(stored)]
