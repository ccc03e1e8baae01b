"""Ctrl-C is never lost: one whose KeyboardInterrupt Python dropped (it landed in a finalizer,
where Python only prints "Exception ignored") is raised again by the next raise_if_dropped()."""

import signal

import pytest

from fanout.common import interrupts


class RaisesCtrlCWhenCollected:
    def __del__(self):
        signal.raise_signal(signal.SIGINT)  # the handler's KeyboardInterrupt is dropped here


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the drop itself, expected
def test_a_ctrl_c_dropped_in_a_finalizer_is_raised_again(ctrl_c_raises):
    with interrupts.sigterm_as_ctrl_c():
        RaisesCtrlCWhenCollected()  # collected at once: the interrupt is printed and dropped
        with pytest.raises(KeyboardInterrupt):
            interrupts.raise_if_dropped()
        interrupts.raise_if_dropped()  # raised once, not again


def test_sigterm_is_a_ctrl_c_and_is_noted_too(ctrl_c_raises):
    with interrupts.sigterm_as_ctrl_c():
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGTERM)
    interrupts.raise_if_dropped()  # leaving the block forgets what it received


def test_an_ignored_ctrl_c_stays_ignored():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with interrupts.sigterm_as_ctrl_c():
            signal.raise_signal(signal.SIGINT)
            interrupts.raise_if_dropped()
    finally:
        signal.signal(signal.SIGINT, previous)
