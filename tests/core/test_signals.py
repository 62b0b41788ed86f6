"""signals_deferred: a report record is never cut by a signal, yet a second one gets through."""

import os
import signal

import pytest
from ireebench.signals import signals_deferred


def test_signal_inside_a_report_is_delivered_after_it():
    """What makes the guarantee hold: a record is never cut by Ctrl-C."""
    written = []
    with pytest.raises(KeyboardInterrupt), signals_deferred():
        os.kill(os.getpid(), signal.SIGINT)
        written.append("still writing")
    assert written == ["still writing"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_second_signal_gets_through_at_once():
    """A hanging reporter can always be interrupted: the second signal is not held."""
    written = []
    with pytest.raises(KeyboardInterrupt), signals_deferred():
        os.kill(os.getpid(), signal.SIGINT)
        written.append("first held")
        os.kill(os.getpid(), signal.SIGINT)
        written.append("never reached")
    assert written == ["first held"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
