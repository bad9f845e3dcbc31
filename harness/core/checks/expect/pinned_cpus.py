"""``pinned_cpus``: the CPUs each host's tracker has pinned."""

from harness.core.checks import base
from harness.core.checks import reading
from harness.core.problems import Problem
from harness.core import snapshot as snapshot_mod


class PinnedCpus(base.Expectation):
    """The CPUs each host's resource tracker has pinned, exactly.

    How many CPUs the host's tracker has pinned, or which (CPU ids),
    on the whole host or cell by cell (``{cell id: ...}``; a cell not
    named pins none). Exact: a scenario host not named pins none. On a
    host with several compute nodes (``nodes:``) the nodes are named.
    """

    name = 'pinned_cpus'
    order = 40
    summary = "The CPUs each host's resource tracker has pinned."
    shape = '{host: int | [cpu id, ...] | {cell id: int | [cpu id, ...]}}'
    example = 'pinned_cpus: {src: 2, dst: {0: 2}}'

    def parse(self, check, value, scenario, state):
        return {host: _read(check, pinned, host)
                for host, pinned in reading.by_provider(check, value,
                                                        scenario)}

    def check(self, want, snap, scenario):
        problems = []
        for host in sorted(reading.providers(scenario)):
            problems += self._host(host, want.get(host, {'host': 0}), snap)
        return problems

    def _host(self, host, want, snap):
        tracker = snap.trackers.get(host)
        cells = tracker.cells if tracker else ()
        if 'host' in want:
            return self._compare(host, want['host'], list(
                tracker.pinned_cpus) if tracker else [])
        problems = []
        by_id = {cell.id: list(cell.pinned_cpus) for cell in cells}
        for cell_id in sorted(set(want['cells']) | set(by_id)):
            problems += self._compare('%s cell %d' % (host, cell_id),
                                      want['cells'].get(cell_id, 0),
                                      by_id.get(cell_id, []))
        return problems

    def _compare(self, where, want, got):
        what = 'pinned CPUs on %s' % where
        if isinstance(want, int):
            if want != len(got):
                return [Problem(self.name, where, want, sorted(got),
                                '%s: expected %d, got %d [%s]' % (
                                    what, want, len(got),
                                    snapshot_mod.format_cpus(got)))]
            return []
        if want != sorted(got):
            return [Problem(self.name, where, want, sorted(got),
                            '%s: expected [%s], got [%s]' % (
                                what, snapshot_mod.format_cpus(want),
                                snapshot_mod.format_cpus(got)))]
        return []


def _read(check, value, field):
    if isinstance(value, dict):
        return {'cells': {check.integer(cell, field + '.cell', minimum=0):
                          _cpus(check, cpus, '%s.%s' % (field, cell))
                          for cell, cpus in value.items()}}
    return {'host': _cpus(check, value, field)}


def _cpus(check, value, field):
    if isinstance(value, list):
        return sorted(check.integer(cpu, field, minimum=0) for cpu in value)
    return check.integer(value, field, minimum=0)


CHECK = PinnedCpus()
