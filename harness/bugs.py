"""The Launchpad bugs the harness remembers, and how tests tie to them.

Each registered bug has its story's title, its link, the commit that fixed
it, the scenario file that reproduces it (``tests/regressions/scenarios``)
and the fixture that puts it back into today's Nova (``harness
reintroduce``). ``related_bug`` ties a test method to a bug the way
Tempest's decorator does: the ID goes in the test's name, and a failure
carries a hint with the bug's link.
"""

import dataclasses
import functools
import importlib
import os

from testtools import content

from harness import errors

LAUNCHPAD = 'https://bugs.launchpad.net/nova/+bug/%s'
SCENARIO_DIR = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    'tests', 'regressions', 'scenarios')


@dataclasses.dataclass(frozen=True)
class Bug(object):
    id: str
    title: str
    fix: str                # fixing commit (master) and its subject
    reintroduction: str     # 'module:FixtureClass'
    story: str = ''

    @property
    def link(self):
        return LAUNCHPAD % self.id

    @property
    def scenario_path(self):
        return os.path.join(SCENARIO_DIR, 'bug_%s.yaml' % self.id)

    def reintroduce(self):
        """A fresh fixture that puts this bug back into Nova."""
        module, name = self.reintroduction.split(':')
        return getattr(importlib.import_module(module), name)()


REGISTRY = {bug.id: bug for bug in (
    Bug(id='1944759',
        title='Store old_flavor already on source host during resize',
        fix='b841e553214be9a732703e2dfed6c97698ef9b71 Store old_flavor '
            'already on source host during resize',
        reintroduction='harness.reintroduce:OldFlavorSetOnlyAtDestination',
        story='A periodic on the source between resize_instance and '
              'finish_resize dropped the pinned CPUs of the outbound '
              'migration; confirm then failed, revert left the source '
              'short until the next periodic.'),
)}


def get(bug_id):
    """The registered bug ``bug_id`` (``'1944759'``, ``'LP#1944759'``)."""
    key = str(bug_id).upper().replace('LP#', '').replace('#', '').strip()
    try:
        return REGISTRY[key]
    except KeyError:
        raise errors.UnknownName(
            'unknown bug %r; known: %s' % (bug_id, ', '.join(
                '%s (%s)' % (b.id, b.title) for b in known())))


def known():
    return sorted(REGISTRY.values(), key=lambda bug: bug.id)


def related_bug(bug_id):
    """Tie a test method to a Launchpad bug (as Tempest's decorator does).

    The method's name must carry the ID (``test_bug_1944759_...``) so that
    ``stestr run 1944759`` selects it; on failure the test gets a
    ``related bug`` detail and a hint with the link.
    """
    bug = get(bug_id)

    def decorator(test):
        if bug.id not in test.__name__:
            raise errors.HarnessError(
                '%s is tied to LP#%s but its name lacks the ID, so '
                '`stestr run %s` would miss it' % (test.__name__, bug.id,
                                                   bug.id))

        @functools.wraps(test)
        def wrapper(self, *args, **kwargs):
            try:
                return test(self, *args, **kwargs)
            except Exception:
                self.addDetail('related bug', content.text_content(
                    'This test guards LP#%s "%s": %s\nFixed by %s\n'
                    'Reproduce: harness reproduce %s'
                    % (bug.id, bug.title, bug.link, bug.fix, bug.id)))
                raise

        wrapper.related_bug = bug.id
        return wrapper
    return decorator
