"""Real-time factor and word error rate of the offline engines (Whisper tiny.en, Whisper base, PocketSphinx).

Synthesizes 10 telephone-style clips with espeak-ng from fixed sentences full of names, times and numbers
(8 kHz, band-passed 300-3400 Hz with sox when it is installed), runs each local engine on them, and,
when fixtures/demo/calls.json exists, on the caller lines of the demo calls too (true text: "said").

    .venv/bin/python bench/local_engines.py [--engines tiny.en,base,pocketsphinx] [--no-demo] [--verbose]

RTF = processing seconds / audio seconds, after one warm-up clip (model loading is reported apart).
WER = (S + D + I) / reference words summed over all clips, with the product's normalizer and its
match rule (transcriber_tests.lib.scoring.score_line: digits and number words stay different); "match" is the
share of clips transcribed exactly. The machine may be shared: run it on a quiet machine for stable RTFs.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "oncore.settings")
os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-for-a-throwaway-database")

import django  # noqa: E402

django.setup()

from oncore import audio  # noqa: E402
from oncore.transcribers.engines import get_engine  # noqa: E402

SENTENCES = [
    ("en-us+m3", "Hi, this is Siobhan Murphy, I'd like a table for four at eight thirty on Friday."),
    ("en-gb+f3", "My patient number is four seven two nine one and my appointment is at ten fifteen."),
    ("en-us+f2", "Can you move my booking from Tuesday to Wednesday at half past six?"),
    ("en-gb-scotland+m2", "The ticket number is INC zero zero four five two one eight."),
    ("en-us+m1", "It's Giovanni Rossi, party of six, around seven o'clock tonight."),
    ("en-gb+m3", "Please call me back on zero seven seven one two, three four five six seven eight."),
    ("en-us+f3", "I need to cancel the cleaning on the twenty first of March."),
    ("en-gb-scotland+f2", "My laptop asset tag is LT three one nine zero two and the screen is broken."),
    ("en-us+m2", "We'll be twelve people for a birthday dinner on Saturday the fourteenth."),
    ("en-gb+f2", "Could you spell that? It's Nguyen, N G U Y E N."),
]
ENGINES = {
    "tiny.en": ("faster_whisper", "tiny.en"),
    "base": ("faster_whisper", "base"),
    "pocketsphinx": ("pocketsphinx", "en-us"),
}
DEMO = ROOT / "fixtures" / "demo" / "calls.json"


def scorer():
    """(errors, reference words, exact match) for one clip: the product's score_line, else jiwer."""
    try:
        from transcriber_tests.lib.scoring import score_line

        def score(expected, said):
            s = score_line(expected, said)
            return s.substitutions + s.deletions + s.insertions, s.reference_words, s.match

        return score, "transcriber_tests.lib.scoring.score_line"
    except ImportError:
        import jiwer

        def score(expected, said):
            out = jiwer.process_words(expected.lower(), said.lower() or "<nothing>")
            errors = out.substitutions + out.deletions + out.insertions
            return errors, len(expected.split()), errors == 0

        return score, "jiwer (lowercase only)"


def synthesize(folder: Path) -> list[tuple[str, bytes]]:
    if shutil.which("espeak-ng") is None:
        sys.exit(
            "espeak-ng is not installed: apt-get install espeak-ng (and sox for the telephone band-pass)"
        )
    has_sox = shutil.which("sox") is not None
    clips = []
    for i, (voice, text) in enumerate(SENTENCES):
        wide, phone = folder / f"s{i}.wav", folder / f"s{i}-8k.wav"
        subprocess.run(
            ["espeak-ng", "-v", voice, "-s", "160", "-w", str(wide), text], check=True, capture_output=True
        )
        if has_sox:
            subprocess.run(
                ["sox", str(wide), "-r", "8000", "-c", "1", "-b", "16", str(phone), "sinc", "300-3400"],
                check=True,
                capture_output=True,
            )
            wav = phone.read_bytes()
        else:
            wav = audio.encode_wav(audio.decode_wav_mono(wide.read_bytes(), target_rate=8000), 8000)
        clips.append((text, wav))
    print(
        f"synthesized {len(clips)} clips with espeak-ng ({'sox band-pass 300-3400 Hz' if has_sox else 'no sox'}, 8 kHz)"
    )
    return clips


def demo_clips() -> list[tuple[str, bytes]]:
    document = json.loads(DEMO.read_text())
    clips = []
    for call in document.get("calls", []):
        if not call.get("recording") or call.get("recorded") is False:
            continue
        path = DEMO.parent / call["recording"]
        for line in call.get("lines", []):
            if line.get("speaker") != "caller" or not line.get("said") or line.get("start_s") is None:
                continue
            cut = audio.cut_line(path, line["start_s"], line["end_s"], label=call.get("external_id", ""))
            clips.append((line["said"], cut.candidate_wav))
    return clips


def measure(name: str, clips: list[tuple[str, bytes]], score, verbose: bool) -> dict:
    provider, model = ENGINES[name]
    entry = SimpleNamespace(
        provider=provider,
        model=model,
        options={},
        api_key_env="",
        price_per_minute=Decimal(0),
        display_name=name,
    )
    engine = get_engine(entry)
    started = time.perf_counter()
    engine.transcribe(clips[0][1], language="en")  # loads the model (joins Whisper base the first time)
    load_s = time.perf_counter() - started
    busy = seconds = 0.0
    errors = words = matches = 0
    for expected, wav in clips:
        started = time.perf_counter()
        result = engine.transcribe(wav, language="en")
        busy += time.perf_counter() - started
        seconds += result.audio_seconds
        e, n, match = score(expected, result.text)
        errors, words, matches = errors + e, words + n, matches + match
        if verbose:
            print(f"  {name:>12} | {expected}\n  {'':>12} > {result.text}")
    return {
        "engine": name,
        "clips": len(clips),
        "audio_s": seconds,
        "rtf": busy / seconds,
        "wer": errors / words,
        "match": matches / len(clips),
        "first_call_s": load_s,
    }


def report(title: str, rows: list[dict]) -> None:
    print(f"\n{title}")
    print(
        f"{'engine':>12} {'clips':>6} {'audio s':>8} {'RTF':>6} {'WER':>6} {'match':>6} {'first call s':>13}"
    )
    for r in rows:
        print(
            f"{r['engine']:>12} {r['clips']:>6} {r['audio_s']:>8.1f} {r['rtf']:>6.2f} {r['wer']:>6.2f} "
            f"{r['match']:>6.0%} {r['first_call_s']:>13.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default=",".join(ENGINES), help="comma-separated: " + ", ".join(ENGINES))
    parser.add_argument("--no-demo", action="store_true", help="skip the demo calls even when they exist")
    parser.add_argument("--verbose", action="store_true", help="print every transcript")
    args = parser.parse_args()
    names = [n.strip() for n in args.engines.split(",") if n.strip()]
    unknown = [n for n in names if n not in ENGINES]
    if unknown:
        parser.error(f"unknown engines {unknown}; choose from {list(ENGINES)}")
    score, scored_by = scorer()
    print(f"scoring with {scored_by}; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")

    with tempfile.TemporaryDirectory() as folder:
        clips = synthesize(Path(folder))
        report("espeak-ng telephone clips", [measure(n, clips, score, args.verbose) for n in names])
    if DEMO.exists() and not args.no_demo:
        lines = demo_clips()
        report(
            f"demo calls: {len(lines)} caller lines from {DEMO.relative_to(ROOT)}",
            [measure(n, lines, score, args.verbose) for n in names],
        )
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
