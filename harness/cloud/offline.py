"""A guard that keeps a cloud off the network.

Everything a cloud talks to is in-process: Nova's API and Placement over
wsgi-intercept, RPC over oslo.messaging's in-memory driver, databases in
SQLite. An attempt to open a real network connection (TCP or UDP, any
address, loopback included) is a bug in a test or the harness; it fails
at once with a message naming the address, instead of hanging on a
firewall or passing only on a developer's laptop.
"""

import socket

import fixtures

from harness.core import errors

NETWORK_FAMILIES = (socket.AF_INET, socket.AF_INET6)


class NetworkAttempt(errors.HarnessError):
    """Something tried to open a real network connection."""


class NoNetwork(fixtures.Fixture):
    """Refuse ``connect`` on every internet socket while in place."""

    def _setUp(self):
        # socket.socket is eventlet's GreenSocket once Nova monkey-patched;
        # guard whichever class the process uses. Under native threading
        # the methods are inherited from _socket.socket: mock's patch
        # deletes what it added to the class, where a plain set-back would
        # leave the inherited method as an attribute of its own.
        cls = socket.socket
        for method in ('connect', 'connect_ex'):
            real = getattr(cls, method)
            self.useFixture(fixtures.MockPatchObject(
                cls, method, _guarded(real, method)))


def _guarded(real, method):
    def guarded(sock, address, *args, **kwargs):
        if sock.family in NETWORK_FAMILIES:
            raise NetworkAttempt(
                'a test tried to open a real network connection (%s to %s);'
                ' everything a cloud uses is in-process (wsgi-intercept, '
                'fake RPC, SQLite), so this is a bug in the test or the '
                'harness' % (method, _address(address)))
        return real(sock, address, *args, **kwargs)
    guarded.__name__ = method
    return guarded


def _address(address):
    if isinstance(address, tuple) and len(address) >= 2:
        return '%s port %s' % (errors.show(str(address[0]))[1:-1],
                               errors.show(address[1]))
    return errors.show(str(address))
