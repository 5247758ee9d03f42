"""Write the small code-switching fixture: fixtures/codeswitch/fixture.jsonl and its audio.

Three utterances, each in the three conditions of docs/codeswitch.md: code-switched (synthesized in pieces,
one espeak-ng voice per language, joined with a short pause), the same content monolingual in the matrix
language, and monolingual English. Two Spanish-English, one French-English. The code-switched lines carry
per-word language tags, except cs-es-02's, so the import has to detect them (benchmark.codeswitch.langtag).
Three more lines are broken on purpose (tags that do not match the words, an unknown condition, missing
audio): the import must report them by id and reason.

    .venv/bin/python scripts/make_codeswitch_fixture.py

Audio is 16 kHz mono FLAC; the whole folder stays under 1 MB.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from oncore.audio import decode_wav_mono, write_recording  # noqa: E402

OUT = ROOT / "fixtures" / "codeswitch"
AUDIO = OUT / "audio"
RATE = 16000
PAUSE_S = 0.08
MAX_BYTES = 1024 * 1024
VOICES = {"en": "en-us", "es": "es", "fr": "fr-fr"}

# id, pair, code-switched pieces [(language, text)], matrix-language text, English text, tags given
UTTERANCES = [
    (
        "cs-es-01",
        "es-en",
        [
            ("es", "Hola, necesito ayuda porque"),
            ("en", "my laptop keeps crashing"),
            ("es", "y no puedo abrir el"),
            ("en", "email"),
            ("es", "del cliente."),
        ],
        "Hola, necesito ayuda porque mi portátil se bloquea y no puedo abrir el correo del cliente.",
        "Hello, I need help because my laptop keeps crashing and I cannot open the client's email.",
        True,
    ),
    (
        "cs-fr-01",
        "fr-en",
        [
            ("fr", "Bonjour, je voudrais"),
            ("en", "book a meeting room"),
            ("fr", "pour demain matin avec l'équipe."),
        ],
        "Bonjour, je voudrais réserver une salle de réunion pour demain matin avec l'équipe.",
        "Hello, I would like to book a meeting room for tomorrow morning with the team.",
        True,
    ),
    (
        "cs-es-02",
        "es-en",
        [
            ("es", "Mi solicitud de vacaciones sigue"),
            ("en", "pending approval"),
            ("es", "desde el lunes pasado."),
        ],
        "Mi solicitud de vacaciones sigue pendiente de aprobación desde el lunes pasado.",
        "My holiday request has been pending approval since last Monday.",
        False,
    ),
]


def speak(text: str, language: str) -> np.ndarray:
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw.wav"
        subprocess.run(["espeak-ng", "-v", VOICES[language], "-s", "150", "-w", str(raw), text], check=True)
        return decode_wav_mono(raw.read_bytes(), target_rate=RATE)


def write_clip(name: str, pieces: list[tuple[str, str]]) -> str:
    pause = np.zeros(int(PAUSE_S * RATE), dtype=np.float32)
    parts = []
    for language, text in pieces:
        parts += [speak(text, language), pause]
    write_recording(AUDIO / name, np.concatenate(parts[:-1]), RATE, "FLAC")
    return f"audio/{name}"


def rows() -> list[dict]:
    result = []
    for uid, pair, pieces, matrix_text, english_text, tagged in UTTERANCES:
        matrix = pair.split("-")[0]
        reference = " ".join(text for _, text in pieces)
        row = {
            "id": uid,
            "pair": pair,
            "condition": "code_switched",
            "audio": write_clip(f"{uid}.cs.flac", pieces),
            "reference": reference,
        }
        if tagged:
            row["languages"] = [language for language, text in pieces for _ in text.split()]
        result.append(row)
        for condition, language, text in (
            ("monolingual_matrix", matrix, matrix_text),
            ("monolingual_english", "en", english_text),
        ):
            short = "l2" if condition == "monolingual_matrix" else "en"
            audio = write_clip(f"{uid}.{short}.flac", [(language, text)])
            result.append(
                {"id": uid, "pair": pair, "condition": condition, "audio": audio, "reference": text}
            )
    cs = result[0]
    result += [
        {**cs, "id": "bad-tags", "languages": ["es", "en"]},
        {**cs, "id": "bad-condition", "condition": "bilingual"},
        {**cs, "id": "bad-audio", "audio": "audio/missing.flac"},
    ]
    return result


def main() -> None:
    AUDIO.mkdir(parents=True, exist_ok=True)
    for old in AUDIO.glob("*.flac"):
        old.unlink()
    lines = [json.dumps(row, ensure_ascii=False) for row in rows()]
    (OUT / "fixture.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    size = sum(p.stat().st_size for p in [OUT / "fixture.jsonl", *AUDIO.glob("*.flac")])
    print(f"Wrote {len(lines)} lines and {len(list(AUDIO.glob('*.flac')))} clips ({size} bytes) to {OUT}.")
    if size > MAX_BYTES:
        raise SystemExit(f"The fixture is {size} bytes, over the {MAX_BYTES} limit: shorten the utterances.")


if __name__ == "__main__":
    main()
