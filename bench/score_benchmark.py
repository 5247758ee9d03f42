"""Time scoring a full-size entity benchmark run: 2,151 clips, 3,245 spans, stored hypotheses.

The data is synthetic but shaped like the published dataset (its card's counts): 1,354 MLCommons clips
with 1,632 spans and 797 Belebele/FLEURS clips with 1,613, the card's entity types and tiers (2,334 A,
911 B), 47 clips with zero entities, lowercase verbatim MLCommons references and cased Belebele ones.
Hypotheses get the errors systems make: capitals and punctuation changed, numbers spoken ("eleven",
"nineteen ninety"), abbreviations (St., Dr.), names misheard, words dropped, 1% clips with no hypothesis.

Two timings:
- pure: benchmark.entity.scoring.score() over plain tuples (the matcher on every span, pooled WER); "cold"
  clears the matcher's caches first, like a fresh process.
- db: benchmark.entity.actions.score_run() on a temporary SQLite database: the matcher self-test, loading the
  rows, scoring, upserting 3,245 SpanHit rows, the summary and the manifest. --no-db skips it.

    .venv/bin/python bench/score_benchmark.py [--repeat 5] [--no-db]

Target: scoring takes at most 2 s. Each figure is wall time with this process's CPU time beside it: on a
shared machine the wall time includes waiting for a core. The first pass inserts the SpanHit rows; later
passes find them stored and update nothing (scoring is deterministic), like scoring a run again.
"""

import argparse
import os
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

TARGET_S = 2.0
ML, BF = "MLCommons_TestPortion", "Belebele_Fleurs_TestPortion"
CLIPS = {ML: 1354, BF: 797}
ZERO_ENTITY = {ML: 40, BF: 7}
# type: (MLCommons spans, Belebele spans, tier A, tier B), from the dataset card
TYPES = {
    "PERSON": (797, 396, 790, 403),
    "GPE": (380, 477, 649, 208),
    "ORG": (291, 220, 508, 3),
    "NORP": (75, 171, 0, 246),
    "LOC": (28, 195, 172, 51),
    "OTHER_NAMED": (61, 154, 215, 0),
}
FIRST = "david jim maria john sarah michael linda robert susan james karen mark lisa paul nancy".split()
RARE_FIRST = "siobhan aoife bartholomew ximena oluwaseun thaddeus ingrid kenji zbigniew leopoldo".split()
SURNAMES = (
    "cantwell o'neill nakamura kowalczyk abernathy delacroix fitzgerald okonkwo haverford "
    "mcallister vanderbilt rasmussen thibodeaux yamamoto krzyzewski"
).split()
PLACES_B = "boston seattle chicago texas california london paris china".split()
PLACES_A = [
    "st. louis",
    "mount vernon",
    "fort worth",
    "new york",
    "san luis obispo",
    "kalamazoo",
    "walla walla",
    "baton rouge",
    "saint paul",
    "ouagadougou",
    "reykjavik",
    "tegucigalpa",
]
ORGS = [
    "epa",
    "boston city council",
    "department of public works",
    "united nations",
    "world health organization",
    "city of springfield planning board",
    "metropolitan transit authority",
    "a.c.l.u.",
    "johnson & johnson",
    "ford motor company",
    "apple inc.",
    "the red cross",
]
NORP = "american french democrats republicans catholic chinese mexican irish german".split()
LOCS = [
    "mount rainier",
    "lake michigan",
    "the amazon",
    "sahara desert",
    "mississippi river",
    "the alps",
    "moon",
    "pacific ocean",
    "rocky mountains",
    "yellowstone",
]
OTHER = [
    "clean air act",
    "apollo 11",
    "world war ii",
    "route 66",
    "super bowl 50",
    "the 1990 census",
    "title ix",
    "catch-22",
    "the 4th of july parade",
    "covid-19 relief fund",
    "highway 101",
    "boeing 747",
]
FILLER = (
    "the a and of to in that is was for on with as it at by this from be we will have are not they "
    "you council meeting motion item public comment budget year vote members board next agenda "
    "please thank second discussion approve report staff question"
).split()
SPOKEN = {
    "11": "eleven",
    "66": "sixty six",
    "50": "fifty",
    "1990": "nineteen ninety",
    "ix": "nine",
    "22": "twenty two",
    "4th": "fourth",
    "19": "nineteen",
    "101": "one oh one",
    "747": "seven forty seven",
    "ii": "two",
    "st.": "saint",
    "saint": "st",
    "mount": "mt",
    "fort": "ft",
    "&": "and",
    "inc.": "incorporated",
    "company": "co",
    "a.c.l.u.": "aclu",
}


def span_text(rng: random.Random, type_: str, tier: str) -> str:
    if type_ == "PERSON":
        if tier == "B":
            return rng.choice(FIRST)
        return f"{rng.choice(RARE_FIRST + FIRST)} {rng.choice(SURNAMES)}"
    if type_ == "GPE":
        return rng.choice(PLACES_B if tier == "B" else PLACES_A)
    if type_ == "ORG":
        return rng.choice(ORGS)
    if type_ == "NORP":
        return rng.choice(NORP)
    if type_ == "LOC":
        return rng.choice(LOCS)
    return rng.choice(OTHER)


def cased(text: str) -> str:
    return " ".join(
        word if word in ("of", "the", "and") else word[:1].upper() + word[1:] for word in text.split()
    )


def hear(rng: random.Random, span: str) -> str:
    """What a system might write for a span: mostly right, sometimes spoken forms, sometimes wrong."""
    roll = rng.random()
    words = span.split()
    if roll < 0.55:
        return cased(span) if rng.random() < 0.5 else span
    if roll < 0.70:
        return " ".join(SPOKEN.get(w, w) for w in words)
    if roll < 0.82 and len(words) > 1:
        return " ".join(words[:-1])  # last word dropped
    if roll < 0.92:
        word = rng.choice(words)
        i = rng.randrange(len(word))
        return span.replace(word, word[:i] + rng.choice("aeiou") + word[i + 1 :], 1)  # misheard
    return rng.choice(FILLER)


def make_data(seed: int = 5):
    """(clips, spans) as plain tuples for benchmark.entity.scoring.score(), shaped like the published data."""
    from benchmark.entity.scoring import ClipRow, SpanRow

    rng = random.Random(seed)
    spans_by_subset = {ML: [], BF: []}
    for type_, (ml, bf, tier_a, tier_b) in TYPES.items():
        tiers = ["A"] * tier_a + ["B"] * tier_b
        rng.shuffle(tiers)
        for subset, count in ((ML, ml), (BF, bf)):
            for _ in range(count):
                tier = tiers.pop()
                spans_by_subset[subset].append((type_, tier, span_text(rng, type_, tier)))
    clips, spans = [], []
    for subset, count in CLIPS.items():
        prefix = "ml" if subset == ML else "bf"
        ids = [f"{prefix}-{n:05d}" for n in range(count)]
        with_entities = ids[ZERO_ENTITY[subset] :]
        per_clip = {clip_id: [] for clip_id in ids}
        pool = spans_by_subset[subset]
        rng.shuffle(pool)
        for i, item in enumerate(pool):  # every clip with entities gets one, the rest land at random
            clip_id = with_entities[i] if i < len(with_entities) else rng.choice(with_entities)
            per_clip[clip_id].append(item)
        words_per_clip = 20 if subset == ML else 30
        for clip_id in ids:
            reference, hypothesis = [], []
            for index, (type_, tier, text) in enumerate(per_clip[clip_id]):
                filler = [rng.choice(FILLER) for _ in range(rng.randint(2, 8))]
                heard = [w if rng.random() > 0.08 else rng.choice(FILLER) for w in filler]
                written = text if subset == ML else cased(text)
                reference += filler + [written]
                hypothesis += heard + [hear(rng, text)]
                spans.append(SpanRow(f"{clip_id}#{index}", clip_id, written, type_, tier))
            tail = [rng.choice(FILLER) for _ in range(max(3, words_per_clip - len(reference)))]
            reference += tail
            hypothesis += [w if rng.random() > 0.08 else rng.choice(FILLER) for w in tail]
            ref_text = " ".join(reference) + ("" if subset == ML else ".")
            hyp_text = None if rng.random() < 0.01 else " ".join(hypothesis)
            clips.append(ClipRow(clip_id, subset, ref_text, hyp_text))
    return clips, spans


def clear_matcher_caches() -> None:
    """Clear every cache of the matcher's modules (its package re-exports only the public names)."""
    from benchmark.entity.matcher import canon, match, numbers

    for module in (canon, match, numbers):
        for name in dir(module):
            cache_clear = getattr(getattr(module, name), "cache_clear", None)
            if callable(cache_clear):
                cache_clear()


def time_pure(clips, spans, repeat: int):
    from benchmark.entity import scoring

    times = []
    card = None
    for _ in range(repeat):
        clear_matcher_caches()
        started, cpu = time.perf_counter(), time.process_time()
        card = scoring.score(clips, spans, "A")
        times.append((time.perf_counter() - started, time.process_time() - cpu))
    return card, times


def time_db(clips, spans, repeat: int):
    """Load the data into a temporary SQLite database and time actions.score_run on it."""
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    from benchmark.entity import actions
    from benchmark.models import BenchmarkRun, Clip, Dataset, EntitySpan, Hypothesis

    dataset = Dataset.objects.create(name="bench", version="1", revision="synthetic")
    made = Clip.objects.bulk_create(
        [
            Clip(
                dataset=dataset,
                clip_id=c.clip_id,
                subset=c.subset,
                transcript=c.transcript,
                duration_s=5.0,
                audio=f"benchmark/audio/{c.clip_id}.flac",
                audio_sha256="0" * 64,
            )
            for c in clips
        ],
        batch_size=500,
    )
    pk_of = {clip.clip_id: clip.pk for clip in made}
    EntitySpan.objects.bulk_create(
        [
            EntitySpan(
                clip_id=pk_of[s.clip_id],
                index=int(s.span_id.rsplit("#", 1)[1]),
                text=s.text,
                type=s.type,
                tier=s.tier,
            )
            for s in spans
        ],
        batch_size=500,
    )
    run = BenchmarkRun.objects.create(
        dataset=dataset, source=BenchmarkRun.IMPORTED, system_name="synthetic", status=BenchmarkRun.DONE
    )
    Hypothesis.objects.bulk_create(
        [
            Hypothesis(
                run=run,
                clip_id=pk_of[c.clip_id],
                text=c.hypothesis or "",
                status=Hypothesis.DONE if c.hypothesis is not None else Hypothesis.FAILED,
            )
            for c in clips
        ],
        batch_size=500,
    )
    times = []
    for _ in range(repeat):
        clear_matcher_caches()
        started, cpu = time.perf_counter(), time.process_time()
        card = actions.score_run(run)
        times.append((time.perf_counter() - started, time.process_time() - cpu))
    return card, times


def describe(times) -> str:
    """ "first 0.61 s (cpu 0.58 s), best of 5 0.50 s (cpu 0.49 s)": wall time and this process's CPU time."""
    first = times[0]
    best = min(times)
    return (
        f"first pass {first[0]:.3f} s (cpu {first[1]:.3f} s), best of {len(times)} {best[0]:.3f} s "
        f"(cpu {best[1]:.3f} s)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-db", action="store_true", help="Time the pure core only.")
    args = parser.parse_args()

    tmp = tempfile.TemporaryDirectory()
    os.environ["DATABASE_URL"] = f"sqlite:///{Path(tmp.name) / 'bench.sqlite3'}"
    os.environ["ONCORE_VAR_DIR"] = tmp.name
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "oncore.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-for-a-throwaway-database")

    started = time.perf_counter()
    clips, spans = make_data()
    made_s = time.perf_counter() - started
    tiers = Counter(s.tier for s in spans)
    print(
        f"data: {len(clips)} clips, {len(spans)} spans (tier A {tiers['A']}, tier B {tiers['B']}), "
        f"{sum(1 for c in clips if c.hypothesis is None)} clips without a hypothesis; made in {made_s:.2f} s"
    )

    card, times = time_pure(clips, spans, args.repeat)
    print(card.headline_text + f"; WER {100 * card.wer.wer:.1f}% over {card.wer.clips} clips")
    print(f"pure scoring: {describe(times)} ({len(spans) / min(t[0] for t in times):,.0f} spans/s at best)")
    slowest = times[0]
    if not args.no_db:
        card_db, db_times = time_db(clips, spans, args.repeat)
        assert card_db.headline == card.headline
        print(
            f"db scoring (self-test, load, score, store {len(spans)} hits, summary, manifest; SQLite): "
            f"{describe(db_times)}"
        )
        slowest = max(slowest, db_times[0])
    wall, cpu = slowest
    print(
        f"target {TARGET_S:.1f} s for a first pass: "
        f"wall {wall:.3f} s {'within' if wall <= TARGET_S else 'OVER'}, "
        f"cpu {cpu:.3f} s {'within' if cpu <= TARGET_S else 'OVER'}"
    )
    tmp.cleanup()
    return 0 if min(wall, cpu) <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
