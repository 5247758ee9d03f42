"""Time cutting line clips from a one-hour call recording: seek-based cut_line vs decoding it all.

Writes a 60-minute two-channel FLAC (tones over noise) into a temporary folder, cuts 1,000 lines
(1-8 s long, at random positions) with oncore.audio.cut_line, then times the naive approach
(sf.read of the whole recording, then slicing) on a few clips and extrapolates it to 1,000.

    .venv/bin/python bench/clip_audio.py [--rate 8000] [--minutes 60] [--clips 1000] [--naive 5]

Target: the 1,000 cuts take at most 2 s (best of --repeat passes: the machine may be shared).
"""

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from oncore.audio import cut_line, probe, write_recording  # noqa: E402

TARGET_S = 2.0  # for 1,000 cuts


def make_recording(path: Path, minutes: float, rate: int) -> None:
    frames = int(minutes * 60 * rate)
    rng = np.random.default_rng(7)
    samples = np.empty((frames, 2), dtype=np.int16)
    chunk = rate * 60
    for begin in range(0, frames, chunk):
        n = min(chunk, frames - begin)
        t = (begin + np.arange(n)) / rate
        for channel, freq in enumerate((440.0, 1500.0)):
            signal = 6000 * np.sin(2 * np.pi * freq * t) + rng.normal(0, 1500, n)
            samples[begin : begin + n, channel] = np.clip(signal, -32768, 32767).astype(np.int16)
    write_recording(path, samples, rate, format="FLAC")


def random_lines(count: int, duration_s: float, seed: int = 11) -> list[tuple[float, float]]:
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        length = rng.uniform(1.0, 8.0)
        start = rng.uniform(0.0, duration_s - length)
        lines.append((start, start + length))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=8000, help="sample rate of the recording (Hz)")
    parser.add_argument("--minutes", type=float, default=60.0, help="length of the recording")
    parser.add_argument("--clips", type=int, default=1000, help="line clips cut with cut_line")
    parser.add_argument("--naive", type=int, default=5, help="clips cut by decoding the whole file")
    parser.add_argument("--repeat", type=int, default=3, help="passes over the clips; the best one counts")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="clip-bench-") as folder:
        path = Path(folder) / "call.flac"
        began = time.perf_counter()
        make_recording(path, args.minutes, args.rate)
        info = probe(path, label="the bench call")
        print(
            f"recording: {info.duration_s / 60:.0f} min, {info.channels} channels, {info.sample_rate} Hz "
            f"{info.format}, {path.stat().st_size / 1e6:.1f} MB (written in {time.perf_counter() - began:.1f} s)"
        )

        lines = random_lines(args.clips, info.duration_s)
        walls, cpus = [], []
        for _ in range(args.repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            audio_s = 0.0
            for start, end in lines:
                clips = cut_line(path, start, end, margin_s=0.3, label="the bench call")
                audio_s += clips.duration_s
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
        seek_s = min(walls)
        print(
            f"cut_line (seek + read): {args.clips} clips ({audio_s / 60:.1f} min of audio, margin 0.3 s); "
            f"wall per pass {', '.join(f'{w:.3f}' for w in walls)} s, "
            f"CPU per pass {', '.join(f'{c:.3f}' for c in cpus)} s; "
            f"best wall {seek_s:.3f} s = {seek_s / args.clips * 1000:.2f} ms per clip"
        )

        wall, cpu = time.perf_counter(), time.process_time()
        for start, end in lines[: args.naive]:
            data, rate = sf.read(path, dtype="int16")
            data[int((start - 0.3) * rate) : int((end + 0.3) * rate)].copy()
        naive_s = time.perf_counter() - wall
        naive_cpu = time.process_time() - cpu
        per_clip = naive_s / args.naive
        print(
            f"naive (sf.read of the whole file per clip): measured {args.naive} clips in {naive_s:.2f} s wall "
            f"({naive_cpu:.2f} s CPU) = {per_clip:.3f} s per clip; EXTRAPOLATED from those {args.naive} "
            f"to {args.clips} clips: {per_clip * args.clips:.0f} s"
        )
        floor_cpu = naive_cpu / args.naive * audio_s / info.duration_s
        print(
            f"decode floor: at that full-file decode rate, the {audio_s / 60:.1f} min of audio in the clips "
            f"alone take {floor_cpu:.2f} s CPU to decode (cut_line best pass: {min(cpus):.2f} s CPU)"
        )
        print(f"speed-up over naive: {per_clip * args.clips / seek_s:.0f}x")
        target_s = TARGET_S * args.clips / 1000
        verdict = "meets" if seek_s <= target_s else "MISSES"
        print(
            f"target: {args.clips} cuts in at most {target_s:g} s -> {verdict} "
            f"(best wall {seek_s:.3f} s, best CPU {min(cpus):.3f} s)"
        )


if __name__ == "__main__":
    main()
