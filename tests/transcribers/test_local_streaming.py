"""The local streaming engine: Whisper over a growing buffer with the local-agreement policy (whisper_streaming's
LocalAgreement-2). The policy is tested on scripted passes (no model, exact); the engine itself on speech that
espeak-ng synthesizes, where only what does not depend on the CPU's arithmetic is asserted (a bounded WER,
the passes, the figures' order)."""

from decimal import Decimal

import pytest

from oncore.transcribers.engines import TranscriptionError, get_engine
from oncore.transcribers.engines.streaming import session
from oncore.transcribers.engines.streaming.local import Agreement

from .test_local_engines import SENTENCE, entry, needs_espeak, spoken, wer  # noqa: F401 (spoken is a fixture)


def timed(*words, start=0.0, step=0.3):
    return [(start + i * step, start + (i + 1) * step, f" {w}") for i, w in enumerate(words)]


def test_two_passes_that_agree_commit_their_common_prefix_and_leave_the_rest_tentative():
    agreement = Agreement()
    assert agreement.insert(timed("table", "for")) == []  # one pass alone commits nothing
    committed = agreement.insert(timed("table", "for", "two", "at"))
    assert [w[2] for w in committed] == [" table", " for"]
    assert agreement.text(agreement.committed) == "table for" and agreement.shown == "table for two at"
    agreement.insert(timed("table", "for", "two", "at", "seven"))
    assert agreement.text(agreement.committed) == "table for two at"


def test_a_word_a_later_pass_hears_otherwise_is_never_committed_until_two_passes_agree():
    agreement = Agreement()
    agreement.insert(timed("table", "four"))
    agreement.insert(timed("table", "for", "two"))
    assert agreement.text(agreement.committed) == "table"  # "four" then "for": not agreed
    agreement.insert(timed("table", "for", "two"))
    assert agreement.text(agreement.committed) == "table for two"


def test_committed_words_never_change_and_a_repeat_of_them_is_dropped():
    agreement = Agreement()
    agreement.insert(timed("table", "for", "two"))
    agreement.insert(timed("table", "for", "two", "please"))
    before = list(agreement.committed)
    # a pass that starts again just before the committed end, repeating its last word
    agreement.insert([(0.85, 1.0, " two"), (1.0, 1.2, " please"), (1.2, 1.5, " thanks")])
    assert agreement.committed[: len(before)] == before
    assert agreement.shown == "table for two please thanks"


def test_finishing_makes_the_last_pass_final():
    agreement = Agreement()
    agreement.insert(timed("yes", "that's"))
    agreement.finish()
    assert agreement.text(agreement.committed) == "yes that's" and agreement.tentative == []


def streaming(model="tiny.en", **options):
    transcriber = entry("faster_whisper", model, **options)
    transcriber.mode = "streaming"
    return get_engine(transcriber)


@needs_espeak
@pytest.mark.slow
def test_it_streams_a_spoken_sentence_through_whisper_tiny_en_offline(spoken, monkeypatch):  # noqa: F811
    monkeypatch.setattr(session, "SPEED", 4.0)  # four times real time: the passes still overlap the audio
    result = streaming(min_chunk_s=1.0).transcribe(spoken, speech_start_s=0.25, speech_end_s=2.8)
    assert wer(SENTENCE, result.text) <= 0.3, result.text
    figures = result.stream
    assert result.raw["passes"] >= 2 and figures.partials >= 1
    assert figures.first_partial_s is not None and 0 < figures.first_partial_s
    # Its head latency: from the caller's first word (0.25 s into the clip, 0.0625 s at four times real time) to
    # the first text, which no pass gives before a whole chunk (1 s of audio) is in.
    assert figures.speech_start_s == 0.25
    assert figures.time_to_first_partial_s == pytest.approx(figures.first_partial_s - 0.0625, abs=1e-3)
    assert figures.time_to_first_partial_s >= (1.0 - 0.25) / 4
    assert figures.time_to_final_s > 0 and result.latency_s == figures.time_to_final_s
    assert figures.frames == -(-int(result.audio_seconds * 16000) // 320)
    assert result.cost == Decimal("0") and result.raw["engine"] == "faster-whisper streaming"


def test_a_streaming_whisper_entry_without_a_model_is_refused():
    with pytest.raises(TranscriptionError) as caught:
        streaming(model="")
    assert not caught.value.retryable and "names no Whisper model" in caught.value.message
