"""Synthesize the demo in fixtures/demo/: FLAC recordings, calls.json and flags.json.

Each call is a scripted dialogue spoken by espeak-ng: one voice per tenant's assistant, a different
voice and speed per caller. Caller lines go through a telephone band-pass (sox highpass 300 lowpass
3400) and get band-limited noise at 30 dB SNR. Recordings are two-channel 16 kHz FLAC: channel 0 =
caller, channel 1 = assistant, lines placed one after another with 0.4-0.8 s gaps, so every line's
speech bounds (start_s/end_s) are known exactly.

The live transcript of each caller line is what the live transcriber (Whisper tiny.en, the catalogue
entry the calls name) really produced, through the product's own path: the recording is written by
oncore.audio, the line is cut from it by oncore.audio with the configured clip margin
(ONCORE_CLIP_MARGIN_S), and the catalogue entry's engine transcribes the clip, exactly as a full-call
run's calibration replays it. The demo's errors are real, not written by hand. Assistant lines keep their
TTS script as the live text. The true script is kept as "said".

flags.json lists the demo's flags, written by hand in CALLS ("flags": line -> tags, note, typed text): what
a person reading the call would type, word for word, with counts, clock times, dates and ids in digits as
the demo team agreed ("8:30", "30851"; "said" keeps the words the voice spoke), the error tags and note they
would add, and how many hours after the call they flagged it. A line is flagged only when its live transcript
differs from the typed text after the house normalization; every wrong caller line without a flag is
printed, so the spec can be completed by hand. A call gets at most half its usable caller lines as flags, so every
flag draws its control line (the demo bank asks for one; a control is never a flagged line, nor one another flag
of the bank already uses).

The format is documented in docs/call-import-format.md. Re-run with:

    .venv/bin/python scripts/make_demo_calls.py

It sets Django up on a throwaway SQLite database (the catalogue as migrated). Output is deterministic on one
machine: fixed seeds, no dither in sox, the live engine's beam search at temperature 0. Whisper's int8 arithmetic
differs by CPU, so another machine can hear some lines otherwise; load_demo hears every caller line again there.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import jiwer  # noqa: E402
import numpy as np  # noqa: E402
import soundfile as sf  # noqa: E402
from scipy.signal import butter, sosfiltfilt  # noqa: E402

from oncore import audio as oncore_audio  # noqa: E402
from oncore.config import config  # noqa: E402

SR = 16000
FORMAT = "oncore-calls/1"
REFERENCE_DATE = "2026-11-28T12:00:00+00:00"
LIVE_SLUG = "whisper-tiny-en"
SNR_DB = 30.0
MAX_TOTAL_BYTES = 15 * 1024 * 1024
LEAD_S = 0.3
TAIL_S = 0.5
FLAGS_FORMAT = "oncore-demo-flags/1"
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
    "Grainne": "Grawnya",
    "Keohane": "Kyo hawn",
    "Tadhg": "Tyg",
    "Oluwaseun": "Oloowa shayoon",
    "Adeyemi": "Adeh yemmy",
    "Seamus": "Shaymus",
    "Cuddihy": "Cuddy hee",
    "Oisin": "Usheen",
    "Mulcahy": "Mul cahee",
    "Fionnuala": "Finoola",
    "Breathnach": "Bran ock",
}

# Each call: lines alternate assistant / caller, starting with the assistant's greeting.
# "voice" is the caller's espeak-ng voice and speed (words per minute).
CALLS = [
    {
        "external_id": "bistro-005",
        "tenant": "bistro",
        "started_at": "2026-10-03T12:10:00+00:00",
        "voice": ("en-gb+f4", 150),
        "flagged_after_h": 22,
        "flags": {
            1: (
                ["time"],
                "One fifteen came out as 115.",
                "Hi, could I book Sunday lunch for 3 people at 1:15?",
            ),
            3: (
                ["name", "spelling"],
                "She spelled her name out: G R A I N N E.",
                "Grainne Keohane. That's G R A I N N E.",
            ),
        },
        "lines": [
            "Good evening, Bistro Verde bookings, how can I help?",
            "Hi, could I book Sunday lunch for three people at one fifteen?",
            "Yes, thirteen fifteen on Sunday for three. What name is it under?",
            "Grainne Keohane. That's G R A I N N E.",
            "Thank you Grainne. Any dietary requirements?",
            "My father is vegan, and we'll bring a cake if that's alright.",
            "That's fine, I've noted vegan for one and a cake.",
            "Lovely, see you Sunday.",
        ],
    },
    {
        "external_id": "dental-005",
        "tenant": "dental",
        "started_at": "2026-10-09T09:20:00+00:00",
        "voice": ("en-us+m2", 155),
        "flagged_after_h": 26,
        "flags": {
            1: (
                ["name"],
                "Tadhg O'Meara; 'I chipped a tooth' was lost too.",
                "Hi, my name is Tadhg O'Meara, I chipped a tooth this morning.",
            ),
            5: (
                ["time", "number"],
                "Four forty; patient numbers are written as digits.",
                "4:40 is perfect. My patient number is 27704.",
            ),
        },
        "lines": [
            "Hello, you've reached Riverside Dental, how can I help you today?",
            "Hi, my name is Tadhg O'Meara, I chipped a tooth this morning.",
            "I'm sorry to hear that. Is it causing you any pain?",
            "A little when I drink something cold, on the lower left side.",
            "We can see you at four forty this afternoon. Does that suit?",
            "Four forty is perfect. My patient number is 2 7 7 0 4.",
            "Thank you, you're booked in for sixteen forty today.",
            "Great, thanks.",
        ],
    },
    {
        "external_id": "helpdesk-005",
        "tenant": "helpdesk",
        "started_at": "2026-10-15T14:05:00+00:00",
        "voice": ("en-us+f3", 160),
        "flagged_after_h": 3,
        "flags": {
            1: (
                ["product"],
                "Outlook won't sync, not 'think'.",
                "Hi, Outlook won't sync my calendar since the update last night.",
            ),
            3: (["name"], "", "Oluwaseun Adeyemi, employee number 418809."),
        },
        "lines": [
            "IT service desk, you're speaking with the virtual agent. What's the problem?",
            "Hi, Outlook won't sync my calendar since the update last night.",
            "Sorry about that. Can I take your name and employee number?",
            "Oluwaseun Adeyemi, employee number 4 1 8 8 0 9.",
            "Thanks. Have you tried signing out and back in?",
            "Yes, twice. I also restarted the laptop, asset tag LT 0 1 2 2 7.",
            "I've raised ticket INC0041762 with the messaging team.",
            "Perfect, thanks very much.",
        ],
    },
    {
        "external_id": "bistro-006",
        "tenant": "bistro",
        "started_at": "2026-10-24T16:45:00+00:00",
        "voice": ("en-gb-x-rp", 150),
        "flagged_after_h": 18,
        "flags": {
            1: (
                ["name", "time"],
                "Seamus Cuddihy, at seven.",
                "Hello, I booked for 8 people tomorrow at 7, under Seamus Cuddihy.",
            ),
            5: (
                ["accessibility"],
                "The wheelchair access question was lost.",
                "And one of the party uses a wheelchair, is there step free access?",
            ),
        },
        "lines": [
            "Good evening, Bistro Verde bookings, how can I help?",
            "Hello, I booked for eight people tomorrow at seven, under Seamus Cuddihy.",
            "I have it here. Would you like to change something?",
            "Yes, can we make it ten people and push it to half past seven?",
            "Ten people at nineteen thirty tomorrow. That's updated.",
            "And one of the party uses a wheelchair, is there step free access?",
            "Yes, the side entrance on Thomas Street is step free.",
            "Great, thank you.",
        ],
    },
    {
        "external_id": "dental-006",
        "tenant": "dental",
        "started_at": "2026-11-01T10:30:00+00:00",
        "voice": ("en-gb", 160),
        "flagged_after_h": 48,
        "flags": {
            1: (
                ["name"],
                "Oisin Mulcahy, the patient's son.",
                "Hi, I'm calling for my son, Oisin Mulcahy, he needs a check-up.",
            ),
            3: (
                ["date"],
                "Age seven, born the third of June twenty nineteen.",
                "He's 7, his date of birth is the 3rd of June 2019.",
            ),
        },
        "lines": [
            "Hello, you've reached Riverside Dental, how can I help you today?",
            "Hi, I'm calling for my son, Oisin Mulcahy, he needs a check-up.",
            "Of course. How old is Oisin?",
            "He's seven, his date of birth is the third of June twenty nineteen.",
            "We have Saturday at nine fifteen or Monday at three forty five.",
            "Saturday at nine fifteen, please.",
            "Done, Saturday at nine fifteen for Oisin.",
            "Thanks a lot.",
        ],
    },
    {
        "external_id": "helpdesk-006",
        "tenant": "helpdesk",
        "started_at": "2026-11-05T11:15:00+00:00",
        "voice": ("en-gb-scotland", 150),
        "flagged_after_h": 5,
        "flags": {
            3: (
                ["repetition"],
                "The live text repeats one phrase over and over.",
                "It's on, but it says no signal on HDMI 1.",
            ),
            5: (["name", "number"], "", "Fionnuala Breathnach, extension 3307."),
        },
        "lines": [
            "IT service desk, you're speaking with the virtual agent. What's the problem?",
            "Hi, my second monitor stopped working after I moved desks to room B two one four.",
            "Is the monitor's power light on?",
            "It's on, but it says no signal on HDMI one.",
            "Try the other cable. If that fails, can I take your name?",
            "Fionnuala Breathnach, extension three three zero seven.",
            "Thanks Fionnuala, ticket INC0042460 is open and a technician will call.",
            "Great, cheers.",
        ],
    },
    {
        "external_id": "bistro-004",
        "tenant": "bistro",
        "started_at": "2026-11-08T17:41:00+00:00",
        "voice": ("en-gb", 145),
        "live": "name",
        "flagged_after_h": 15,
        "flags": {
            1: (["name"], "", "Hi, this is Niamh Fitzgerald, I want to cancel my booking for Thursday."),
        },
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
        "flagged_after_h": 2,
        "flags": {
            5: (["name"], "", "Eoghan McElligott."),
        },
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
        "flagged_after_h": 30,
        "flags": {
            1: (["name"], "Aoife, not Ethan.", "Hi, I'd like to book a cleaning. My name is Aoife Brennan."),
            5: (["time"], "", "Tuesday at 10:45 works for me."),
        },
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
        "flagged_after_h": 20,
        "flags": {
            1: (
                ["time", "number"],
                "A table for four at eight thirty.",
                "Hi, I'd like to book a table for 4 at 8:30 on Friday.",
            ),
            3: (["name"], "Siobhan O'Brien.", "It's Siobhan, Siobhan O'Brien."),
        },
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
        "flagged_after_h": 4,
        "flags": {
            1: (
                ["number"],
                "Ticket INC0042817.",
                "Hi, I'm calling about ticket INC0042817, my laptop still won't boot.",
            ),
        },
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
        "flagged_after_h": 24,
        "flags": {
            1: (
                ["name"],
                "Thanh Nguyen; 'a bad toothache' was lost too.",
                "Hello, I have a bad toothache since last night. My name is Thanh Nguyen.",
            ),
            3: (
                ["address", "name"],
                "Fourteen Cathal Brugha Street, apartment three B.",
                "No, I'm new. I live at 14 Cathal Brugha Street, apartment 3B.",
            ),
        },
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
        "flagged_after_h": 16,
        "flags": {
            3: (
                ["name", "spelling"],
                "Krzysztof Wojcik, spelled out.",
                "Krzysztof Wojcik. That's K R Z Y S Z T O F.",
            ),
            5: (
                ["spelling"],
                "Coeliac, as the guest says it; and the window table.",
                "One of us is coeliac, and we'd like the window table if possible.",
            ),
        },
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
        "flagged_after_h": 28,
        "flags": {
            1: (["name"], "Saoirse Kavanagh.", "Hi, it's Saoirse Kavanagh, patient number 30851."),
        },
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
        "flagged_after_h": 6,
        "flags": {
            3: (
                ["address"],
                "Ballymount Industrial Estate, Dublin twelve.",
                "Unit 7, Ballymount Industrial Estate, Dublin 12.",
            ),
            5: (
                ["name", "number"],
                "One 5 of the employee number was dropped.",
                "Ruairi O'Sullivan, employee number 550238.",
            ),
        },
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
        "flagged_after_h": 20,
        "flags": {
            1: (
                ["name"],
                "Mary-Kate Doherty; 'I have a booking tonight'.",
                "Hi, it's Mary-Kate Doherty, I have a booking tonight at 6 and I need to move it.",
            ),
            5: (
                ["special request"],
                "The birthday note was lost.",
                "Brilliant. Can you also put a note that it's a birthday?",
            ),
        },
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
        "flagged_after_h": 3,
        "flags": {
            1: (
                ["number"],
                "Asset tag LT 0 0 9 3 1.",
                "Hi, the printer on the third floor is jammed again, asset tag LT00931.",
            ),
        },
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


def setup_django(workdir: Path):
    """Django on a throwaway SQLite database, migrated: the catalogue as the product has it. Returns the live
    transcriber's catalogue entry and the clip margin the product is configured with."""
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir / 'demo.sqlite3'}"
    os.environ["MEDIA_ROOT"] = str(workdir / "media")
    os.environ.setdefault("SECRET_KEY", "make-demo-calls-throwaway-database")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "oncore.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from oncore.transcribers.models import Transcriber

    call_command("migrate", verbosity=0)
    return Transcriber.objects.get(slug=LIVE_SLUG), float(config().clip_margin_s)


def live_text(engine, recording: Path, start_s: float, end_s: float) -> str:
    """What the live transcriber hears on a line: its clip cut by oncore.audio with the configured margin,
    transcribed by the catalogue entry's engine, as a replay in the product does it."""
    clips = oncore_audio.cut_line(recording, start_s, end_s)
    return engine.transcribe(clips.candidate_wav).text


def build_call(call: dict, engine, workdir: Path, out_dir: Path) -> tuple[dict, list[dict]]:
    """The call as oncore-calls/1 has it, and its flags (see flag_specs)."""
    assistant = next(a for a in ASSISTANTS if a["tenant"] == call["tenant"])
    channels, pieces = place_lines(call, assistant["voice"], workdir)
    recorded = call.get("recorded", True)
    untimed = set(call.get("untimed_lines", []))
    # An unrecorded call's recording is written too, outside the fixtures: its live text is heard the same way.
    recording = f"{call['external_id']}.flac"
    path = (out_dir if recorded else workdir) / recording
    oncore_audio.write_recording(path, channels, SR)
    lines = []
    for i, p in enumerate(pieces):
        start_s = round(p["start"] / SR, 3)
        end_s = round((p["start"] + len(p["audio"])) / SR, 3)
        caller = p["channel"] == 0
        timed = recorded and i not in untimed
        lines.append(
            {
                "speaker": "caller" if caller else "assistant",
                "text": live_text(engine, path, start_s, end_s) if caller else p["said"],
                "start_s": start_s if timed else None,
                "end_s": end_s if timed else None,
                "said": p["said"],
            }
        )
    # An older call names its live transcriber instead of referring to it: found by its catalogue name.
    live = {"name": engine.transcriber.display_name} if call.get("live") == "name" else {"slug": LIVE_SLUG}
    document = {
        "external_id": call["external_id"],
        "tenant": call["tenant"],
        "assistant": assistant["name"],
        "started_at": call["started_at"],
        "recording": recording if recorded else None,
        "recorded": recorded,
        "live_transcriber": live,
        "lines": lines,
        "_duration_s": len(channels) / SR,
    }
    flags = flag_specs(call, lines)
    usable = [
        ln for ln in lines if ln["speaker"] == "caller" and ln["start_s"] is not None and ln["text"].strip()
    ]
    if 2 * len(flags) > len(usable):  # the bank draws one control per flag among the lines nobody else uses
        print(
            f"  {call['external_id']}: {len(flags)} flags on {len(usable)} usable caller lines leave some without a control"
        )
    return document, flags


def flag_specs(call: dict, lines: list[dict]) -> list[dict]:
    """The call's flags: each caller line the spec flags, when its live text differs from what the person typed
    (after the house normalization; an equal one is not flagged and is printed)."""
    flags = []
    for position, (tags, note, typed) in sorted(call.get("flags", {}).items()):
        line = lines[position]
        assert line["speaker"] == "caller", f"{call['external_id']} line {position} is not a caller line"
        if normalize(typed) == normalize(line["text"]):
            print(f"  not flagged, the live transcriber got it right: {call['external_id']} line {position}")
            continue
        flags.append(
            {
                "call": call["external_id"],
                "position": position,
                "expected_text": typed,
                "tags": tags,
                "note": note,
                "flagged_after_h": call.get("flagged_after_h", 20),
            }
        )
    return flags


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="fixtures/demo", help="output folder (default: fixtures/demo)")
    args = parser.parse_args()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)

    began = time.monotonic()
    calls, flags = [], []
    with tempfile.TemporaryDirectory() as tmp:
        live, margin = setup_django(Path(tmp))
        from oncore.transcribers.engines import get_engine

        engine = get_engine(live)
        print(f"live transcriber {live.slug} ({live.provider} {live.model}), clip margin {margin} s")
        for spec in CALLS:
            call, call_flags = build_call(spec, engine, Path(tmp), out_dir)
            calls.append(call)
            flags += call_flags

    refs, hyps = [], []
    wrong_total = 0
    flagged = {(f["call"], f["position"]) for f in flags}
    print(f"{'call':<14}{'dur s':>7}{'lines':>7}{'caller':>8}{'wrong':>7}{'WER':>7}  recording")
    for call in sorted(calls, key=lambda c: c["started_at"]):
        caller = [(i, ln) for i, ln in enumerate(call["lines"]) if ln["speaker"] == "caller"]
        c_refs = [normalize(ln["said"]) for _, ln in caller]
        c_hyps = [normalize(ln["text"]) for _, ln in caller]
        wrong = sum(r != h for r, h in zip(c_refs, c_hyps, strict=True))
        wrong_total += wrong
        refs += c_refs
        hyps += c_hyps
        size = (out_dir / call["recording"]).stat().st_size if call["recording"] else 0
        print(
            f"{call['external_id']:<14}{call.pop('_duration_s'):>7.1f}{len(call['lines']):>7}{len(caller):>8}"
            f"{wrong:>7}{jiwer.wer(c_refs, c_hyps):>7.2f}  {call['recording'] or '-'} {size / 1024:.0f} KiB"
        )
        for (i, ln), r, h in zip(caller, c_refs, c_hyps, strict=True):
            if r != h:
                mark = "flagged" if (call["external_id"], i) in flagged else "not flagged"
                print(f"    [{i}] {mark}\n      said: {ln['said']}\n      live: {ln['text']}")

    document = {
        "format": FORMAT,
        "reference_date": REFERENCE_DATE,
        "tenants": TENANTS,
        "assistants": [{k: v for k, v in a.items() if k != "voice"} for a in ASSISTANTS],
        "calls": sorted(calls, key=lambda c: c["started_at"]),
    }
    (out_dir / "calls.json").write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    flags_document = {"format": FLAGS_FORMAT, "reference_date": REFERENCE_DATE, "flags": flags}
    (out_dir / "flags.json").write_text(json.dumps(flags_document, indent=2, ensure_ascii=False) + "\n")

    total_bytes = sum((out_dir / c["recording"]).stat().st_size for c in calls if c["recording"])
    n_lines = sum(len(c["lines"]) for c in calls)
    print(
        f"\n{len(calls)} calls, {n_lines} lines, {len(refs)} caller lines; "
        f"tiny.en wrong on {wrong_total}/{len(refs)} caller lines after normalization; "
        f"caller WER {jiwer.wer(refs, hyps):.3f}; {len(flags)} flags "
        f"over {len({f['call'].split('-')[0] for f in flags})} tenants"
    )
    print(f"FLAC total {total_bytes / 1024 / 1024:.2f} MiB (limit {MAX_TOTAL_BYTES / 1024 / 1024:.0f} MiB)")
    print(f"done in {time.monotonic() - began:.0f} s")
    if total_bytes > MAX_TOTAL_BYTES:
        raise SystemExit("FLAC total is over the limit")


if __name__ == "__main__":
    main()
