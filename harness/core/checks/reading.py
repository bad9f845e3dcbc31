"""What expectation keys share: reading names and amounts, showing them.

The readers take the key's ``checking.Checker``, whose field names start
from the key (``vm1.src`` is ``expect.allocations.vm1.src``), and return
the value read or fail naming the file, the step and the field.
"""

from harness.core import snapshot as snapshot_mod


def sub(field, name):
    """The field ``name`` under ``field`` (the key's own value: ``''``)."""
    return '%s.%s' % (field, name) if field else '%s' % (name,)


def providers(scenario):
    """The names expectations give compute nodes (``Scenario.providers``).

    A host's own name, or, for a host with several compute nodes
    (``nodes:``), each node's.
    """
    names = getattr(scenario, 'providers', None)
    return names() if callable(names) else set(scenario.hosts)


def multi_node_hosts(scenario):
    """Host -> its compute nodes, for the hosts with ``nodes:``."""
    return {name: host.nodes for name, host in scenario.hosts.items()
            if getattr(host, 'nodes', None) is not None}


def known_servers(state):
    """The servers a step may name: booted so far, deleted ones too."""
    return set(state.servers) | state.deleted


def by_provider(check, value, scenario, whole_hosts=False):
    """``(provider, its value)`` of a ``{provider: ...}`` mapping.

    With ``whole_hosts`` a multi-node host may be named too.
    """
    names = providers(scenario)
    if whole_hosts:
        names = names | set(multi_node_hosts(scenario))
    for name, amounts in check.mapping(value, '').items():
        check.known(name, names, 'host')
        yield name, amounts


def by_server(check, value, state):
    """``(server, its value, its field)`` of a ``{server: ...}`` mapping.

    A server booted so far (deleted ones too).
    """
    known = known_servers(state)
    for server, want in check.mapping(value, '').items():
        field = '%s' % (server,)
        check.known(server, known, field)
        yield server, want, field


def by_host(check, value, scenario, field=''):
    """``(host, its value)`` of a ``{host: ...}`` mapping at ``field``."""
    for host, amounts in check.mapping(value, field).items():
        check.known(host, scenario.hosts, sub(field, 'host'))
        yield host, amounts


def flavors(check, value, scenario, field):
    """The flavors a name or a list of names gives."""
    names = [value] if isinstance(value, str) else value
    for name in names:
        check.known(name, scenario.flavors, field, noun='flavor')
    return [scenario.flavors[name] for name in names]


def amounts(check, value, scenario, field):
    """``{RESOURCE_CLASS: n}`` of flavor(s), or as given; ``0``: nothing."""
    if value in (None, 0):
        return {}
    if isinstance(value, (str, list)):
        total = {}
        for flavor in flavors(check, value, scenario, field):
            for rc, amount in flavor.resources().items():
                total[rc] = total.get(rc, 0) + amount
        return total
    check.mapping(value, field)
    for rc, amount in value.items():
        check.resource_class(rc, '%s.%s' % (field, rc))
        check.integer(amount, '%s.%s' % (field, rc), minimum=0)
    return {rc: amount for rc, amount in value.items() if amount}


def count(check, value, field):
    return check.integer(value, field, minimum=0)


def per_server(check, value, held, scenario, state):
    """``{server: {host: held(...)}}``; ``{}``/``0`` for a server: none."""
    parsed = {}
    known = known_servers(state)
    for server, on_hosts in check.mapping(value, '').items():
        field = '%s' % (server,)
        check.known(server, known, field)
        on_hosts = {} if on_hosts in (None, 0) else on_hosts
        parsed[server] = {
            host: held(check, amount, '%s.%s' % (field, host))
            for host, amount in by_host(check, on_hosts, scenario, field)}
    return parsed


def diff(want, got):
    """Two ``{RESOURCE_CLASS: n}`` side by side, class by class."""
    if not want:
        return 'expected nothing, got %s' % snapshot_mod.format_resources(got)
    if not got:
        return 'expected %s, got nothing' % snapshot_mod.format_resources(
            want)
    parts = ['%s expected %s, got %s' % (rc, want.get(rc, 0), got.get(rc, 0))
             for rc in sorted(set(want) | set(got))
             if want.get(rc, 0) != got.get(rc, 0)]
    return ', '.join(parts)
