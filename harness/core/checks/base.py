"""What every check declares: expectation keys and invariants as units.

A check is one class in one module: an expectation key under
``harness.core.checks.expect`` (a step's ``expect: {<name>: ...}``) or an
invariant under ``harness.core.checks.invariant`` (checked after every
step). The module exports its unit as ``CHECK``; the registry
(``harness.core.checks``) finds it by walking the package, so adding a
check is adding a module (and its tests).

Every unit declares, as class attributes a reader (and the docs) can
read:

- ``name``: the YAML key or the invariant's name; a ``Problem`` the unit
  finds carries it as ``check``;
- ``accounting``: whether a failure is wrong accounting (Placement's or a
  tracker's: ``Problem.accounting``), not a server or a migration in an
  unexpected state;
- ``summary``: one line; the class docstring is the long description;
- ``order``: its place among its kind (the order ``expect:`` keys are
  listed, read and checked in; the order the ``Checker`` runs and
  reports invariants in); ties go by name.

An expectation key also declares ``shape`` (its YAML value, with types)
and ``example`` (one ``expect:`` entry that the loader accepts in
``EXAMPLE_SCENARIO``; a unit test parses each), and:

- ``parse(check, value, scenario, state)``: its value checked before
  anything runs (one ``ScenarioError`` naming the file, the step and the
  field: ``check`` names fields relative to the key), returned parsed
  (flavors resolved to resources);
- ``check(want, snap, scenario)``: the differences between the parsed
  value and a snapshot, as ``Problem`` records.

An invariant declares ``check(context)``, the problems it finds after a
step (``Context``: the snapshots before and after the step, the cloud,
the windows...), and its windows:

- ``windows(opened, context)``: what it keeps open from step to step (a
  tracker allowed to lag Placement on a host, a claim waiting for a dead
  compute, a node Placement has not caught up with), from what the step
  kinds declare (``StepKind.windows``, ``reconciles``, ``pending``); how
  the step kinds' declarations are read is the invariant's own business;
- ``honours``: the invariants whose windows it reads in
  ``context.windows`` (its own, and another's: ``devices_agree`` leaves
  alone the hosts whose tracker ``tracker_agrees`` lets lag).

A check never changes what it checks: an invariant that needs Nova to run
code runs it on a copy (``cloud.trial()``).
"""

#: Where every expectation key's ``example`` is read: the example is the
#: ``expect:`` of this scenario's last step (vm1 resized from src to dst,
#: waiting for confirm). The loader checks names and shapes; an example
#: about devices says what a host with devices would show.
EXAMPLE_SCENARIO = '''
name: an example of each expectation key
hosts:
  src: {profile: dev-1s-8c-smt2}
  dst: {profile: dev-1s-8c-smt2}
flavors:
  pin2: {vcpus: 2, ram: 512, disk: 1,
         extra_specs: {"hw:cpu_policy": dedicated}}
  pin2b: {vcpus: 2, ram: 1024, disk: 1,
          extra_specs: {"hw:cpu_policy": dedicated}}
steps:
  - boot: {server: vm1, flavor: pin2, host: src}
  - resize: {server: vm1, flavor: pin2b}
'''


class Check(object):
    """A check; see the module docstring. Subclasses set ``name``."""

    name = None
    accounting = True
    summary = None
    order = 1000


class Expectation(Check):
    """An ``expect:`` key; see the module docstring."""

    #: The YAML value, with types.
    shape = None
    #: One ``expect:`` entry as YAML (accepted in ``EXAMPLE_SCENARIO``).
    example = None

    def parse(self, check, value, scenario, state):
        """``value`` checked (``check`` names fields from the key on)."""
        raise NotImplementedError  # pragma: no cover

    def check(self, want, snap, scenario):
        """``Problem`` records for where ``snap`` differs from ``want``."""
        raise NotImplementedError  # pragma: no cover


class Invariant(Check):
    """An invariant, checked after every step; see the module docstring."""

    #: The invariants whose windows it reads in ``context.windows``.
    honours = ()
    #: Whether a ``Checker`` runs it unless told which to run (the
    #: capacity probe runs on request).
    by_default = True

    def windows(self, opened, context):
        """The windows it keeps open after the step.

        ``opened``: those open before it (``None`` at the first step).
        Asked once per step of every invariant that some enabled
        invariant honours, before any checks.
        """
        return None

    def check(self, context):
        """``Problem`` records for what does not hold after the step."""
        raise NotImplementedError  # pragma: no cover


class Context(object):
    """What invariants read after one step (one per step, from the Checker).

    :param cloud: the cloud, read through its public methods (a check
        that runs Nova's code runs it in ``cloud.trial()``).
    :param step: the step (``scenario.Step``) just run.
    :param scenario: the scenario.
    :param before: the snapshot before the step (the step's own at the
        first step); ``snapshot`` the one after it.
    :param reconciled: hosts whose trackers the step reconciled (it ran
        ``update_available_resource`` after all its work).
    :param reconciled_hosts: hosts whose periodic ran with no server left
        since the last server went (their trackers in ``snapshot`` count
        what is left after everything).
    :param checked: how many steps have been checked in this run, this
        one included.
    :param windows: invariant name -> the windows it keeps open after
        this step (``Invariant.windows``), for those honoured.

    ``after_periodics`` is the snapshot taken after the periodics ran on
    every running compute (``periodics_idempotent`` sets it, on a copy of
    the cloud), ``None`` if they did not run; it is checked before
    ``nothing_leaks``, which reads it.
    """

    def __init__(self, cloud, step, scenario, before, snapshot,
                 reconciled=frozenset(), reconciled_hosts=frozenset(),
                 checked=1, windows=None):
        self.cloud = cloud
        self.step = step
        self.scenario = scenario
        self.before = before
        self.snapshot = snapshot
        self.reconciled = set(reconciled)
        self.reconciled_hosts = set(reconciled_hosts)
        self.checked = checked
        self.windows = dict(windows or {})
        self.after_periodics = None
        self._down = None

    @property
    def running(self):
        """The hosts whose compute runs."""
        return set(self.cloud.computes)

    @property
    def stopped(self):
        """The scenario's hosts whose compute is not running."""
        return set(self.scenario.hosts) - self.running

    @property
    def down(self):
        """Hosts Nova sees down: stopped, or forced down through the API."""
        if self._down is None:
            self._down = self.stopped | set(
                self.cloud.services.forced_down_hosts())
        return set(self._down)
