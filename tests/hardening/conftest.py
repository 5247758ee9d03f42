"""Hardening fixtures: the pipeline fixtures of transcriber_tests (a generic STT server on 127.0.0.1,
transcribers that call it, a recorded call) and the API client, shared by name."""

from tests.api import conftest as api_fixtures
from tests.transcriber_tests import conftest as pipeline

stt_server = pipeline.stt_server
make_transcriber = pipeline.make_transcriber
live_transcriber = pipeline.live_transcriber
recorded_call = pipeline.recorded_call
_media_and_fast_retries = pipeline._media_and_fast_retries

org_key = api_fixtures.org_key
api = api_fixtures.api
