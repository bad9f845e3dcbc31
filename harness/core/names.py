"""The scenario language's vocabulary: names the loader and steps share.

Nothing here runs: these are the words a scenario may use (periodic
tasks, roles, race point shapes, fault methods) and the one naming rule
the cloud's fault drivers follow, so the loader checks a scenario without
importing Nova.
"""

import re

# Hosts an injection may name by role (harness.cloud.race): the source and
# destination of the migration in flight, and the server's own host.
ROLES = ('source', 'dest', 'server_host')
DRIVERS = {'fake': 'fake.MediumFakeDriver'}
# Driver methods a fake host may be made to fail in (harness.cloud.faults):
# the hypervisor steps of a cold move, each reached by an RPC cast (from
# the API, or from the other compute). The cloud's casts wait for what
# they cast but keep its failure on the receiving compute
# (harness.cloud.nova_env.CastsWaited), so the failure takes the path it
# takes in a deployment: the sender's flow goes on as if the cast had
# succeeded.
FAULT_METHODS = ('migrate_disk_and_power_off', 'finish_migration',
                 'confirm_migration', 'finish_revert_migration')
# What a ``fault`` step may make fail on a running compute, at the moment
# Nova calls it (harness.cloud.faults.InjectedFaults): a virt driver method
# on the paths of the server's life, or ``claim``, the resource tracker's
# claims (instance, resize, rebuild/evacuate, live migration), which then
# raise ComputeResourcesUnavailable as a host that no longer fits does.
DRIVER_FAULTS = (
    'spawn', 'destroy', 'power_on', 'power_off', 'reboot', 'pause',
    'unpause', 'suspend', 'resume', 'rebuild', 'snapshot', 'cleanup',
    'check_can_live_migrate_destination', 'check_can_live_migrate_source',
    'pre_live_migration', 'live_migration', 'live_migration_abort',
    'live_migration_force_complete', 'post_live_migration',
    'post_live_migration_at_source', 'post_live_migration_at_destination',
    'rollback_live_migration_at_destination') + FAULT_METHODS
CLAIM_FAULT = 'claim'
FAULTS = DRIVER_FAULTS + (CLAIM_FAULT,)
# The network service's calls a ``fault`` step may make fail, at Nova's
# Neutron stand-in (harness.cloud.faults): port binding create, activate,
# delete; port create, update, delete. Each raises the client's error for
# a 500, as a failing Neutron server answers.
NETWORK_FAULTS = ('create_port_binding', 'activate_port_binding',
                  'delete_port_binding', 'create_port', 'update_port',
                  'delete_port')
# A ``fault`` step may instead make Placement answer a request with an
# error (harness.cloud.faults.PlacementFaults): ``METHOD /path`` with
# ``*`` for one segment, and the status it gets.
PLACEMENT_REQUEST = re.compile(r'^(GET|PUT|POST|DELETE|PATCH) /[\w/*.-]*$')


def placement_path(path):
    """A fault's path as a regex: matched from its start, ``*`` a segment."""
    return re.compile('^%s' % re.escape(path).replace(r'\*', '[^/]+'))


# ``timeout``: no answer, the client's read times out; ``unreachable``:
# no connection, the client's is refused.
PLACEMENT_TIMEOUT = 'timeout'
PLACEMENT_UNREACHABLE = 'unreachable'
PLACEMENT_STATUSES = (409, 500, PLACEMENT_TIMEOUT, PLACEMENT_UNREACHABLE)
# What an ``inject`` step may ``do`` at a race point instead of running a
# periodic: an API request for a server, or for a host's compute service
# (``delete_service``: ``HOST_INTERJECTIONS``) (harness.cloud.interject),
# each with the step kind whose race points the request then passes.
INTERJECTIONS = {'delete': 'delete', 'abort_live_migration': 'live_migrate',
                 'force_complete_live_migration': 'live_migrate',
                 'live_migrate': 'live_migrate',
                 'delete_service': 'delete_service'}
# The requests that name a host (or a role), not a server; the API may
# refuse them (409), and the step says whether it must (``refused``).
HOST_INTERJECTIONS = ('delete_service',)
# Nova loads a compute driver by a name under nova.virt; the fault drivers
# live in a module registered as nova.virt.harness_faults.
FAULT_MODULE = 'harness_faults'
PERIODICS = ('update_available_resource', '_poll_unconfirmed_resizes',
             '_cleanup_incomplete_migrations', '_run_pending_deletes',
             '_reclaim_queued_deletes', '_heal_instance_info_cache',
             '_sync_power_states', '_poll_shelved_instances',
             '_cleanup_running_deleted_instances',
             '_check_instance_build_time',
             '_instance_usage_audit', '_poll_rebooting_instances',
             '_poll_rescued_instances', '_poll_volume_usage',
             '_sync_scheduler_instance_info', '_run_image_cache_manager_pass',
             '_cleanup_expired_console_auth_tokens', 'report_state')
# What the race explorer may inject besides periodics (opt-in, ``--tasks``):
# a compute restarted at the point (``inject: {restart: role}``,
# harness.cloud.dying), or its service deleted there, which the API must
# refuse while the move has the host (``inject: {do: {delete_service:
# role}, refused: true}``), on one host at a time.
COMPUTE_TASKS = ('restart', 'delete_service')
# The periodic that reconciles a compute's tracker with what it hosts.
RECONCILE = 'update_available_resource'
CUSTOM_RC = re.compile(r'^CUSTOM_[A-Z0-9_]+$')
MIGRATION_CONSUMER = re.compile(r'^migration\((?P<server>[^)]+)\)$')
# Resource tracker methods a compute passes as race points
# (``tracker.<method>``, harness.cloud.race): each takes the tracker's lock
# itself, so its points lie outside the lock. drop_move_claim_at_dest:
# revert_resize on the destination marks the migration reverted and drops
# the destination's claim under the lock (LP#1879878's revert half).
# finish_evacuation: the destination of an evacuation sets the instance's
# host and drops its migration context under the lock (LP#1896463).
TRACKER_STEPS = ('drop_move_claim_at_dest', 'finish_evacuation')
TRACKER_POINTS = tuple('tracker.' + step for step in TRACKER_STEPS)
# Moments of a periodic at which a call an injection holds at a tracker
# point may carry on (``inject: {overlap: ...}``, harness.cloud.race):
# update_available_resource has read the node's instances and not yet its
# migrations in progress (ResourceTracker._update_available_resource).
INSTANCES_READ = 'instances_read'
OVERLAP_MOMENTS = (INSTANCES_READ,)
POINT_NAME = re.compile(r'^((conductor|scheduler|tracker)\.)?'
                        r'[A-Za-z_][A-Za-z0-9_]*$'
                        r'|^instance\.host$|^migration\.status=[a-z-]+$')


def fault_class_name(method):
    """The fault driver class whose ``method`` fails."""
    return 'MediumFakeDriverFailing%s' % ''.join(
        part.capitalize() for part in method.split('_'))


def fault_driver_name(method):
    """The ``compute_driver`` for a fake host whose ``method`` fails."""
    if method not in FAULT_METHODS:
        raise ValueError('unknown driver method %r; known: %s'
                         % (method, ', '.join(FAULT_METHODS)))
    return '%s.%s' % (FAULT_MODULE, fault_class_name(method))
