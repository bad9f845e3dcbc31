"""A service Nova would not start, as one line instead of a traceback.

Whatever Nova raises while a service of the cloud starts reaches the
runner wrapped by the ``fixtures`` library: a ``MultipleExceptions`` of
Nova's error, the clean-ups' errors and a ``SetupError`` carrying the
captured logs (kilobytes of them), nested once per fixture level.
``refusal`` takes Nova's own error out of it and names the service that
was starting, from the fixture on the error's stack (Nova's
``ServiceFixture``, its API or Placement fixture).
"""

import fixtures

# Fixtures that start a service: their class name, what they start.
_STARTERS = {
    'OSAPIFixture': lambda fixture: 'nova-api',
    'PlacementFixture': lambda fixture: 'placement',
    'ServiceFixture': lambda fixture: _service(
        fixture.kwargs.get('binary'), fixture.kwargs.get('host')),
}


def _service(binary, host):
    if binary == 'nova-compute':
        return 'nova-compute on %s' % host
    return binary or 'a service'


def original(exc):
    """The first error ``exc`` wraps, unwrapped as deep as it goes."""
    while isinstance(exc, fixtures.MultipleExceptions) and exc.args:
        exc = exc.args[0][1]
    return exc


def starting(exc):
    """The service that was starting where ``exc`` was raised, or None.

    The innermost service fixture on the traceback: the one whose
    ``setUp`` Nova's error came through.
    """
    service = None
    tb = exc.__traceback__
    while tb is not None:
        obj = tb.tb_frame.f_locals.get('self')
        name_of = _STARTERS.get(type(obj).__name__)
        if name_of is not None:
            try:
                service = name_of(obj)
            except AttributeError:
                pass
        tb = tb.tb_next
    return service


def refusal(exc):
    """``(service, error)`` if ``exc`` is a fixture's failed set-up.

    ``service`` names what was starting (None when no service fixture
    was), ``error`` is the error the set-up raised first; None if ``exc``
    is no fixture's set-up failure.
    """
    if not isinstance(exc, fixtures.MultipleExceptions):
        return None
    error = original(exc)
    return starting(error), error


def one_line(service, error):
    """``nova-api did not start: PciInvalidAlias: ...``, one line."""
    text = ' '.join(str(error).split()) or '(no message)'
    return '%s did not start: %s: %s' % (
        service or 'the cloud', type(error).__name__, text)
