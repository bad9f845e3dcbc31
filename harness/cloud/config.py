"""A scenario's ``config:`` checked against Nova's registered options.

Before any service starts: each group must be one Nova registers (or
``DEFAULT``), each option one registered in that group, and each value
one the option's type takes. Otherwise one ``ScenarioError`` names the
file and the field (``config.<group>.<option>``), instead of an
oslo.config error from inside a fixture or Nova.

Then the options Nova parses further as its services start, and refuses
to start on, are parsed by Nova's own code with the scenario's values
(``[pci] alias``, which the API and every compute parse at start): a
refusal is one ``ScenarioError`` naming the file, the scenario and the
option, with Nova's reason, instead of a fixture's ``MultipleExceptions``
from inside the cloud's start.
"""

import fixtures
from oslo_config import cfg

from harness.cloud import host_config
from harness.cloud import nova_env
from harness.core import checking
from harness.core import errors


def validate(scenario):
    """Raise ``ScenarioError`` for the first option Nova would refuse.

    The scenario's ``config:``, then each profiled host's own versions and
    device config (``harness.cloud.host_config``).
    """
    _registered(checking.Checker(scenario.path), scenario.config)
    for step in scenario.steps:
        if step.kind == 'reconfigure':
            _registered(checking.Checker(scenario.path).at_step(
                step.index).field('reconfigure'), step.args['config'])
    _parsed_at_start(scenario)
    host_config.validate(scenario)


def _registered(check, config):
    """Each of ``config``'s options one Nova registers, with a valid value."""
    conf = nova_env.CONF
    for group, options in sorted(config.items()):
        field = 'config.%s' % group
        if group != 'DEFAULT' and group not in conf:
            check.fail(field, 'Nova registers no option group %s'
                       % errors.show(group))
        for name, value in sorted(options.items()):
            where = '%s.%s' % (field, name)
            try:
                opt = conf._get_opt_info(
                    name, None if group == 'DEFAULT' else group)['opt']
            except (cfg.NoSuchOptError, cfg.NoSuchGroupError):
                check.fail(where, 'Nova registers no option %s in [%s]'
                           % (errors.show(name), group))
            try:
                conf._convert_value(value, opt)
            except (TypeError, ValueError) as exc:
                check.fail(where, '%s is not a value of this %s option: %s'
                           % (errors.show(value), type(opt.type).__name__,
                              exc))


# Nova's own parsing of [pci] alias (the API's and each compute's start
# call it), and what it reads besides the alias.
_PCI_ALIAS = (('pci', 'alias'), ('filter_scheduler', 'pci_in_placement'))


def _parsed_at_start(scenario):
    """Parse [pci] alias as Nova's services do at start, with its values.

    Nova's parser reads the module-global ``CONF`` of ``nova.pci.request``
    and caches what it read: it runs uncached (``__wrapped__``) on options
    of its own, holding the scenario's values, so that neither Nova's
    config nor its cache changes (a kept cloud may be alive meanwhile).
    """
    if 'alias' not in scenario.config.get('pci', {}):
        return
    import nova.conf
    from nova import exception
    from nova.pci import request as pci_request
    conf = cfg.ConfigOpts()
    # By group name: a group object registered here would share its
    # options' overrides with Nova's CONF, where it is registered too.
    for module in (nova.conf.pci, nova.conf.scheduler):
        for group, opts in module.list_opts().items():
            conf.register_opts(opts, group=group.name)
    for group, name in _PCI_ALIAS:
        value = scenario.config.get(group, {}).get(name)
        if value is not None:
            conf.set_override(name, value, group)
    parse = pci_request.get_alias_from_config.__wrapped__
    try:
        with fixtures.MonkeyPatch('nova.pci.request.CONF', conf):
            parse()
    except exception.PciInvalidAlias as exc:
        checking.Checker('%s, scenario %s' % (
            scenario.path, errors.show(scenario.name))).fail(
            'config.pci.alias', 'Nova refuses to start on it: %s' % exc)
