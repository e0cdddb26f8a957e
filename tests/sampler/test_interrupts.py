"""A Ctrl-C during the compile is not lost when a destructor swallows its KeyboardInterrupt."""

import gc
import os
import signal

import pytest

from nestgrad.sampler.interrupts import InterruptLatch


class _InterruptedInDestructor:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)  # the handler runs at the next bytecodes: inside this destructor
        for _ in range(1000):
            pass


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the swallowed interrupt
def test_a_swallowed_interrupt_is_raised_on_leaving_the_block():
    with pytest.raises(KeyboardInterrupt):
        with InterruptLatch():
            _InterruptedInDestructor()  # freed at once; its KeyboardInterrupt is "ignored" by Python
            gc.collect()
            reached = True
    assert reached  # the block ran on past the swallowed interrupt, as the compile did
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_an_interrupt_raised_normally_passes_once():
    with pytest.raises(KeyboardInterrupt):
        with InterruptLatch():
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):
                pass
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_no_interrupt_no_exception():
    with InterruptLatch() as latch:
        pass
    assert not latch.received
