"""What a report needs that the timeline does not keep, noted as a run goes.

A ``Recorder`` is a run observer (``harness.core.hooks``): give it to
``runner.run(observers=[...])``, or have it watch every run of the process
with ``hooks.observing(recorder)``. At each step's end it notes, for that
step's timeline entry:

- which guest holds which host CPU, as Nova's instance records say
  (``instance.numa_topology``; during a move the migration context's old
  topology on the source, its new one on the destination): the snapshot
  has each cell's pinned CPUs, not whose they are;
- the injections (periodics, requests) that fired at a race point the
  step passed, and the faults that fired while it ran.

Reading Nova's records needs Nova: it is imported when a run starts, never
by importing this module, so reports build without a cloud.
"""

import dataclasses


@dataclasses.dataclass
class Extra(object):
    """What the recorder noted at one step."""
    # host -> {cpu: guest}: the CPUs each guest's record holds there.
    guests: dict = dataclasses.field(default_factory=dict)
    # [(position in the step's passages or None, text)]: what fired.
    marks: list = dataclasses.field(default_factory=list)


class Recorder(object):
    """Notes each step's guests and injections; see the module docstring."""

    def __init__(self):
        self.scenario = None
        self._cloud = None
        self._extras = {}
        self._fired = {}

    # -- observer events ---------------------------------------------------

    def run_started(self, scenario, cloud):
        self.scenario = scenario
        self._cloud = cloud
        self._extras = {}
        self._fired = {}

    def step_done(self, step, entry):
        if self._cloud is None:
            return
        marks = self._marks(entry)
        try:
            guests = guest_cpus(self._cloud)
        except Exception as exc:  # noqa: B902 - a report never fails a run
            guests = {}
            marks.append((None, 'the report could not read which guest '
                                'holds which CPU: %s' % exc))
        extra = Extra(guests=guests, marks=marks)
        # Keyed by identity; the entry is kept so that its id stays its own.
        self._extras[id(entry)] = (entry, extra)

    def run_done(self, scenario, timeline):
        self._cloud = None

    # -- reading -----------------------------------------------------------

    def extra(self, entry):
        """The ``Extra`` noted for a timeline entry (empty if none)."""
        noted = self._extras.get(id(entry))
        return noted[1] if noted and noted[0] is entry else Extra()

    def _marks(self, entry):
        marks = []
        passages = {id(p): n for n, p in enumerate(entry.passages)}
        for injection in list(self._cloud.race.injections):
            for passage in injection.fired:
                if id(passage) in passages:
                    marks.append((passages[id(passage)], '%s at %s' % (
                        injection.description or 'injection', passage)))
        faults = self._cloud.faults
        armed = list(getattr(faults, 'armed', ()))
        placement = getattr(faults, 'placement', None)
        armed += list(getattr(placement, 'armed', ()))
        for fault in armed:
            before = self._fired.get(id(fault), 0)
            now = len(fault.fired)
            self._fired[id(fault)] = now
            if now > before:
                marks.append((None, '%s fired %d time%s' % (
                    fault, now - before, '' if now - before == 1 else 's')))
        return marks


def guest_cpus(cloud):
    """Host -> {cpu: guest name}: the host CPUs each guest's record pins.

    Includes a guest's emulator threads' reserved CPUs. Nova's records,
    not the tracker's counts: the report shows where the two disagree.
    """
    from nova import context
    from nova import objects
    names = cloud.servers.names()
    held = {}
    ctxt = context.get_admin_context()
    # Targeted without Nova's fixture's cell switch: the recorder reads
    # while Nova's work may be in flight (databases.targeted_copy).
    for name, cctxt in cloud.reader.cell_contexts(ctxt):
        instances = objects.InstanceList.get_by_filters(
            cctxt, {'deleted': False},
            expected_attrs=['numa_topology', 'migration_context'])
        for instance in instances:
            guest = names.get(instance.uuid, instance.uuid)
            for host, topology in _topologies(cctxt, instance):
                for cpu in _pinned(topology):
                    held.setdefault(host, {})[cpu] = guest
    return held


def _topologies(cctxt, instance):
    """[(host, NUMA topology)] the instance's record holds CPUs by."""
    from nova import exception
    from nova import objects
    moving = instance.migration_context
    if moving is not None:
        try:
            migration = objects.Migration.get_by_id(
                cctxt, moving.migration_id)
        except exception.MigrationNotFound:
            migration = None
        if migration is not None:
            return [(migration.source_compute, moving.old_numa_topology),
                    (migration.dest_compute, moving.new_numa_topology)]
    return [(instance.host, instance.numa_topology)]


def _pinned(topology):
    if topology is None:
        return set()
    return topology.cpu_pinning | topology.cpuset_reserved
