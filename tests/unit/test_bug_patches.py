"""The patches bugs' reintroductions are made of (``harness.bugs.base``).

They run on plain classes here, no Nova: what each patch remembers is
per thread and per call (Nova 34 runs its services in native threads),
and each puts the method back when its fixture is cleaned up.
"""

import threading

import fixtures

from harness.bugs import base
from harness import testing


class Compute(object):
    """Stands in for a Nova class whose methods a bug's fixture patches."""

    def __init__(self):
        self.seen = []

    def periodic(self, then=None):
        """Runs ``then()`` inside itself, as a method calls another."""
        return then() if then else 'done'

    def claim(self, fail=None):
        if fail:
            raise fail
        return 'claimed'

    def delete(self, what):
        self.seen.append(what)
        return 'deleted %s' % what


ORIGINAL = dict(vars(Compute))


class _InAnotherThread(object):
    """Runs ``func`` in a thread of its own; the result or the error."""

    def __init__(self, func):
        self.result = self.error = None

        def run():
            try:
                self.result = func()
            except Exception as exc:  # handed to the test
                self.error = exc

        self.thread = threading.Thread(target=run)
        self.thread.start()

    def join(self):
        self.thread.join()
        if self.error is not None:
            raise self.error
        return self.result


class TestInside(testing.TestCase):

    def test_a_record_for_each_call_only_while_it_runs(self):
        inside = self.useFixture(base.Inside(Compute, 'periodic'))
        compute = Compute()
        self.assertIsNone(inside.call())
        self.assertFalse(inside.running())
        records = []

        def inner():
            records.append(inside.call())
            return inside.running()

        def outer():
            records.append(inside.call())
            records[0].noted = 'by the outer call'
            self.assertTrue(compute.periodic(inner))
            # Back in the outer call: its own record, with what it noted.
            records.append(inside.call())
            return 'outer done'

        self.assertEqual('outer done', compute.periodic(outer))
        self.assertIsNotNone(records[0])
        self.assertIsNot(records[0], records[1])
        self.assertFalse(hasattr(records[1], 'noted'))
        self.assertIs(records[0], records[2])
        self.assertIsNone(inside.call())

    def test_the_call_ends_when_it_raises(self):
        inside = self.useFixture(base.Inside(Compute, 'periodic'))

        def fail():
            raise ValueError('inside')

        self.assertRaises(ValueError, Compute().periodic, fail)
        self.assertFalse(inside.running())

    def test_another_threads_call_is_not_seen(self):
        inside = self.useFixture(base.Inside(Compute, 'periodic'))
        entered, leave = threading.Event(), threading.Event()

        def held():
            entered.set()
            leave.wait()
            return inside.running()

        other = _InAnotherThread(lambda: Compute().periodic(held))
        try:
            entered.wait()
            # The other thread is inside the method; this one is not, and
            # a call of its own leaves the other's alone.
            here = inside.running()
            self.assertEqual('done', Compute().periodic())
        finally:
            leave.set()
            there = other.join()
        self.assertEqual((False, True), (here, there))


class TestRaisedIn(testing.TestCase):

    def test_a_listed_error_is_told_once(self):
        claim = self.useFixture(base.RaisedIn(Compute, 'claim',
                                              errors=KeyError))
        compute = Compute()
        self.assertFalse(claim.take())
        self.assertRaises(KeyError, compute.claim, KeyError('x'))
        self.assertTrue(claim.take())
        self.assertFalse(claim.take())
        # Another error, and a call that succeeds, leave nothing to tell.
        self.assertRaises(ValueError, compute.claim, ValueError('y'))
        self.assertFalse(claim.take())
        self.assertRaises(KeyError, compute.claim, KeyError('x'))
        self.assertEqual('claimed', compute.claim())
        self.assertFalse(claim.take())

    def test_another_threads_failure_is_its_own(self):
        claim = self.useFixture(base.RaisedIn(Compute, 'claim'))

        def fail_there():
            try:
                Compute().claim(ValueError('there'))
            except ValueError:
                pass
            return claim.take()

        self.assertTrue(_InAnotherThread(fail_there).join())
        self.assertFalse(claim.take())


class TestReplaced(testing.TestCase):

    def test_runs_as_installed_unless_asked(self):
        asked = []
        self.useFixture(base.Replaced(Compute, 'delete',
                                      when=lambda: bool(asked),
                                      result='skipped'))
        compute = Compute()
        self.assertEqual('deleted a', compute.delete('a'))
        asked.append(True)
        self.assertEqual('skipped', compute.delete('b'))
        self.assertEqual(['a'], compute.seen)

    def test_instead_takes_the_call(self):
        self.useFixture(base.Replaced(
            Compute, 'delete', when=lambda: True,
            instead=lambda compute, what: compute.claim()))
        self.assertEqual('claimed', Compute().delete('a'))

    def test_while_inside_another_method(self):
        # A bug's reintroduction as it is built: a delete skipped while
        # the periodic runs, in its thread.
        periodic = self.useFixture(base.Inside(Compute, 'periodic'))
        self.useFixture(base.Replaced(Compute, 'delete',
                                      when=periodic.running))
        compute = Compute()
        self.assertIsNone(compute.periodic(lambda: compute.delete('a')))
        self.assertEqual('deleted b', compute.delete('b'))
        self.assertEqual(['b'], compute.seen)

    def test_once_after_a_failure(self):
        claim = self.useFixture(base.RaisedIn(Compute, 'claim'))
        self.useFixture(base.Replaced(Compute, 'delete', when=claim.take))
        compute = Compute()
        self.assertRaises(ValueError, compute.claim, ValueError('x'))
        self.assertIsNone(compute.delete('a'))
        self.assertEqual('deleted b', compute.delete('b'))


class TestPatchesAreUndone(testing.TestCase):

    def test_each_method_is_back_after_clean_up(self):
        with fixtures.Fixture() as outer:
            periodic = outer.useFixture(base.Inside(Compute, 'periodic'))
            claim = outer.useFixture(base.RaisedIn(Compute, 'claim'))
            outer.useFixture(base.Replaced(Compute, 'delete',
                                           when=periodic.running))
            for name in ('periodic', 'claim', 'delete'):
                self.assertIsNot(ORIGINAL[name], vars(Compute)[name])
                # Named as the method they stand in for.
                self.assertEqual(name, vars(Compute)[name].__name__)
            self.assertFalse(claim.take())
        for name in ('periodic', 'claim', 'delete'):
            self.assertIs(ORIGINAL[name], vars(Compute)[name])
