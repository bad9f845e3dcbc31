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

from harness.core import errors

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
        reintroduction='harness.bugs.reintroduce:OldFlavorSetOnlyAtDestination',
        story='A periodic on the source between resize_instance and '
              'finish_resize dropped the pinned CPUs of the outbound '
              'migration; confirm then failed, revert left the source '
              'short until the next periodic.'),
    Bug(id='1707071',
        title='Compute nodes will fight over allocations during migration',
        fix='5390210a4fa46e2af6b6aec9b41c03147b52760c Remove provider '
            'allocs in confirm/revert resize (with 09e169bd7a74 '
            '"placement: refactor healing of allocations in RT")',
        reintroduction='harness.bugs.reintroduce:ComputesHealInstanceAllocations',
        story='During a move, update_available_resource on the source and '
              'on the destination each rewrote the instance\'s '
              'allocations from its own view: the host tracking the '
              'instance PUT its flavor against itself alone, a host seeing '
              'allocations of an instance it did not track deleted them. '
              'The last periodic won, leaving the instance against the '
              'wrong node, two nodes, or none.'),
    Bug(id='1679750',
        title='Allocations are not cleaned up in placement for instance '
              '\'local delete\' case',
        fix='If507e23f0b7e5fa417041c3870d77786498f741d (Change-Id; sha '
            'not in the stored corpora) Delete allocations from API if '
            'nova-compute is down',
        reintroduction='harness.bugs.reintroduce:LocalDeleteKeepsAllocations',
        story='Deleting a server while its compute was down deleted the '
              'instance in the API but left its allocations against the '
              'down compute node until that compute came back.'),
    Bug(id='1818914',
        title='Hypervisor resource usage on source still shows old flavor '
              'usage after resize confirm until update_available_resource '
              'periodic runs',
        fix='sha-unverified: the ResourceTracker.drop_move_claim change '
            'for LP#1818914 (usage dropped even when the migration is not '
            'tracked)',
        reintroduction='harness.bugs.reintroduce:'
                       'DropMoveClaimOnlyForTrackedMigrations',
        story='Confirming a resize freed nothing on the source compute '
              'node record: drop_move_claim subtracted the old flavor only '
              'for a migration it tracked, and the source tracks the '
              'outbound migration only after its periodic has run.'),
    Bug(id='1953359',
        title='Destination periodic counts an incoming resize with the '
              'source-side NUMA topology before finish_resize',
        fix='sha-unverified: the ResourceTracker._update_available_resource'
            ' change for LP#1953359 (apply the migration context of '
            'incoming, unfinished migrations)',
        reintroduction='harness.bugs.reintroduce:'
                       'PeriodicIgnoresIncomingMigrationContext',
        story='Between resize_instance moving instance.host and '
              'finish_resize applying the migration context, the '
              'destination\'s periodic pinned the CPUs the guest holds on '
              'the source instead of those claimed on the destination.'),
    Bug(id='1879878',
        title='VM become Error after confirming resize with Error info '
              'CPUUnpinningInvalid on source node',
        fix='sha-unverified: "Move confirm resize under semaphore" '
            '(master, Victoria; adds ResourceTracker.'
            'drop_move_claim_at_source, saving migration.status under the '
            'tracker\'s lock)',
        reintroduction='harness.bugs.reintroduce:'
                       'ConfirmMarksMigrationBeforeTrackerLock',
        story='Confirm saved migration.status=confirmed before taking the '
              'resource tracker\'s lock to drop the move claim; a periodic '
              'on the source in between counted nothing for the guest and '
              'the drop then subtracted the old flavor again: negative '
              'usage, and for a pinned guest CPUUnpinningInvalid with the '
              'server in ERROR.'),
    Bug(id='1821594',
        title='Error in confirm_migration leaves stale allocations and '
              '\'confirming\' migration state',
        fix='sha-unverified: "Delete allocations even if _confirm_resize '
            'raises" (master, Train; the allocation delete moved into a '
            'finally around ComputeManager._confirm_resize)',
        reintroduction='harness.bugs.reintroduce:'
                       'ConfirmFailureKeepsSourceAllocations',
        story='When the source hypervisor failed to clean up during '
              'confirm, the server went to ERROR on the destination and '
              'the old flavor the migration record held against the '
              'source was never freed: the delete came only after a '
              'successful clean-up.'),
    Bug(id='1825537',
        title='finish_resize failures incorrectly revert allocations',
        fix='ea297d6ffba81c5dc982afe6519de09ff3744cad finish_resize '
            'deletes the migration\'s source allocations on failure '
            'instead of reverting them (master, Train; the stored corpora '
            'hold ComputeManager.finish_resize and test_bug_1825537 with '
            'the fix at that commit, not its subject)',
        reintroduction='harness.bugs.reintroduce:'
                       'FinishResizeFailureRevertsAllocations',
        story='When the destination\'s hypervisor failed finish_resize, '
              'the instance stayed on the destination in ERROR but Nova '
              'gave the migration\'s old-flavor allocation on the source '
              'back to it, replacing its new flavor on the destination: '
              'Placement held the guest where it was not and nothing '
              'where it was.'),
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
