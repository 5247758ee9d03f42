"""Write the small Entity Transcription Benchmark fixture: fixtures/entity_benchmark/.

Six rows in exactly the published schema (data/test-00000-of-00001.parquet), spoken by espeak-ng:
- MLCommons_TestPortion (verbatim lowercase references, FLAC audio like People's Speech): two clips with
  entities (an initialism, names, a city council, a law), one clip with zero entities, and one row that is
  deliberately broken: its span "shelbyville" is not in its transcript, so the import must exclude it.
- Belebele_Fleurs_TestPortion (cased references, WAV audio like FLEURS): names with a title, a saint
  abbreviation, a number in a name ("Apollo 11"), a roman numeral ("World War II") and a date.
The date span is typed DATE, which the real dataset does not use; the fixture only needs it to exercise
spoken dates.

There is no id column (the published files have none), so clip ids come from the audio paths. A README.md
dataset card gives the fixture's name, version and revision. Re-run with:

    .venv/bin/python scripts/make_entity_fixture.py

Output is deterministic (espeak-ng, sox without dither).
"""

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "fixtures" / "entity_benchmark"
MAX_BYTES = 1024 * 1024
ML, BF = "MLCommons_TestPortion", "Belebele_Fleurs_TestPortion"

# (path, subset, transcript, [(span, type, tier)], spoken text if it differs, voice)
ROWS = [
    (
        "ml-0001.flac",
        ML,
        "the epa met with senator maria cantwell in seattle on march fourth",
        [("epa", "ORG", "A"), ("maria cantwell", "PERSON", "A"), ("seattle", "GPE", "B")],
        "the E P A met with senator maria cantwell in seattle on march fourth",
        "en-us",
    ),
    (
        "ml-0002.flac",
        ML,
        "david asked the boston city council about the clean air act",
        [
            ("david", "PERSON", "B"),
            ("boston city council", "ORG", "A"),
            ("clean air act", "OTHER_NAMED", "A"),
        ],
        None,
        "en-us+m3",
    ),
    ("ml-0003.flac", ML, "we will now take a short recess and come back in ten minutes", [], None, "en-us"),
    (
        "ml-0004.flac",
        ML,
        "the mayor of springfield opened the meeting",
        [("springfield", "GPE", "B"), ("shelbyville", "GPE", "A")],
        None,
        "en-us",
    ),
    (
        "bf-0001.wav",
        BF,
        "Neil Armstrong walked on the Moon during Apollo 11 on July 20, 1969.",
        [
            ("Neil Armstrong", "PERSON", "A"),
            ("Moon", "LOC", "B"),
            ("Apollo 11", "OTHER_NAMED", "A"),
            ("July 20, 1969", "DATE", "A"),
        ],
        None,
        "en-gb",
    ),
    (
        "bf-0002.wav",
        BF,
        "Dr. Siobhan O'Neill of St. Louis spoke to the United Nations about World War II.",
        [
            ("Siobhan O'Neill", "PERSON", "A"),
            ("St. Louis", "GPE", "A"),
            ("United Nations", "ORG", "A"),
            ("World War II", "OTHER_NAMED", "A"),
        ],
        "Doctor Shivawn O'Neill of Saint Louis spoke to the United Nations about World War Two.",
        "en-gb",
    ),
]

CARD = """---
license: cc-by-sa-4.0
pretty_name: Entity Benchmark Fixture
version: 0.1-fixture
revision: fixture-r1
---

# Entity Benchmark Fixture

A few clips synthesized by espeak-ng in the schema of the Entity Transcription Benchmark, for tests.
Made by scripts/make_entity_fixture.py. One row (ml-0004) is broken on purpose.

Current version: **0.1-fixture**
"""


def speak(text: str, voice: str, target: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw.wav"
        subprocess.run(["espeak-ng", "-v", voice, "-s", "155", "-w", str(raw), text], check=True)
        subprocess.run(["sox", "-D", str(raw), "-r", "16000", "-b", "16", "-c", "1", str(target)], check=True)


def offsets(transcript: str, spans) -> list[dict]:
    result, cursor = [], {}
    for text, type_, _ in spans:
        start = transcript.find(text, cursor.get(text, 0))
        if start < 0:
            continue  # the broken row: a span that is not in the transcript has no offsets
        cursor[text] = start + len(text)
        result.append({"start": start, "end": start + len(text), "label": type_, "text": text})
    return result


def build_table() -> pa.Table:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for path, subset, transcript, spans, spoken, voice in ROWS:
            target = Path(tmp) / path
            speak(spoken or transcript, voice, target)
            data = target.read_bytes()
            info = subprocess.run(["soxi", "-D", str(target)], check=True, capture_output=True, text=True)
            rows.append(
                {
                    "audio": {"bytes": data, "path": path},
                    "transcript": transcript,
                    "subset": subset,
                    "entities": json.dumps([s[0] for s in spans]),
                    "entity_types": json.dumps([s[1] for s in spans]),
                    "entity_tiers": json.dumps([s[2] for s in spans]),
                    "entity_offsets": json.dumps(offsets(transcript, spans)),
                    "duration_s": round(float(info.stdout), 3),
                }
            )
    schema = pa.schema(
        [
            ("audio", pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
            ("transcript", pa.string()),
            ("subset", pa.string()),
            ("entities", pa.string()),
            ("entity_types", pa.string()),
            ("entity_tiers", pa.string()),
            ("entity_offsets", pa.string()),
            ("duration_s", pa.float64()),
        ]
    )
    return pa.Table.from_pylist(rows, schema=schema)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    target = args.out / "data" / "test-00000-of-00001.parquet"
    target.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(build_table(), target, compression="zstd")
    (args.out / "README.md").write_text(CARD)
    size = target.stat().st_size
    if size > MAX_BYTES:
        raise SystemExit(f"{target} is {size} bytes, over the {MAX_BYTES} limit for a committed fixture.")
    print(
        f"wrote {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}: "
        f"{len(ROWS)} rows, {size} bytes"
    )


if __name__ == "__main__":
    main()
