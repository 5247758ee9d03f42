"""What a streaming session records of its partials (issue 37, item 3): how many final segments differ from the last
partial shown for their segment, beside the revisions of partials, from what the transcriber sent."""

import time

from oncore.transcribers.engines.streaming.session import Heard


def test_it_counts_finals_that_differ_from_their_last_partial():
    heard = Heard(time.perf_counter())
    heard.partial("table")
    heard.partial("table for")
    heard.final("table for")  # as shown: not revised
    heard.partial("at eight")
    heard.partial("at 830")  # a partial revised
    heard.final("at eight thirty")  # differs from the partial shown
    heard.final("")  # no text: no segment
    assert (len(heard.finals), heard.finals_revised, heard.revisions) == (2, 1, 2)


def test_a_final_with_no_partial_before_it_is_not_a_revision():
    heard = Heard(time.perf_counter())
    heard.final("hello there")
    assert (len(heard.finals), heard.finals_revised) == (1, 0)
