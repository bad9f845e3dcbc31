"""A scenario's ``config:`` checked against Nova's registered options.

Before any service starts: each group must be one Nova registers (or
``DEFAULT``), each option one registered in that group, and each value
one the option's type takes. Otherwise one ``ScenarioError`` names the
file and the field (``config.<group>.<option>``), instead of an
oslo.config error from inside a fixture or Nova.
"""

from oslo_config import cfg

from harness.cloud import nova_env
from harness.core import checking
from harness.core import errors


def validate(scenario):
    """Raise ``ScenarioError`` for the first option Nova would refuse."""
    conf = nova_env.CONF
    check = checking.Checker(scenario.path)
    for group, options in sorted(scenario.config.items()):
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
