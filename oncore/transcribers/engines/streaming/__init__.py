"""Streaming engines: a line's clip sent as a live call would send it, and the time to its final text measured.

    session.py     frames, pacing, what was heard and when, the figures (StreamFigures)
    ws.py          the WebSocket session the vendors' engines share (deadlines, error mapping), on `websockets`
    deepgram.py    Deepgram live (/v1/listen over a WebSocket: interim results, Finalize, CloseStream)
    assemblyai.py  AssemblyAI Universal-Streaming v3 (Begin, turns, Terminate)
    openai.py      OpenAI realtime transcription session (append, commit, delta and completed events)
    elevenlabs.py  ElevenLabs Scribe v2 Realtime (input_audio_chunk, partial and committed transcripts)
    local.py       faster-whisper over a growing buffer with the local-agreement policy (offline)

Each engine has `transcribe(wav, language=None, *, speech_end_s=None, speech_start_s=None) -> EngineResult` whose `stream` holds the
StreamFigures and whose latency_s is the time to final. docs/streaming.md explains what is measured. A provider's
streaming engine is named in its registration (engines/<provider>.py), not here.
"""
