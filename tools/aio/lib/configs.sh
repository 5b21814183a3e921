# Service configuration files under $S/etc (sourced by tools/aio/up). Deterministic for a given
# secrets.env, written only when their content changes (so a second `up` restarts nothing).

ks_auth() { # SECTION USER PASSWORD: keystone password auth section
    cat <<EOF
[$1]
auth_url = http://127.0.0.1:5000/v3
auth_type = password
project_domain_name = Default
user_domain_name = Default
project_name = service
username = $2
password = $3
region_name = RegionOne
EOF
}

db_url() { echo "mysql+pymysql://os:$DB_PASS@127.0.0.1/$1?charset=utf8"; }
rabbit_url() { echo "rabbit://openstack:$RABBIT_PASS@127.0.0.1:5672/"; }

# shipped_etc PROJECT: where PROJECT's sample configuration files are: the venv's etc/ for a
# wheel, the source tree's etc/ for Nova installed editable (wheels install data_files, an
# editable install does not)
shipped_etc() {
    if [ "$1" = nova ] && [ "$NOVA_INSTALL" = editable ]; then
        echo "$(nova_source_dir)/etc/nova"
    else
        echo "$VENV/etc/$1"
    fi
}

# copy_rootwrap PROJECT: rootwrap.conf with the venv first in exec_dirs
copy_rootwrap() {
    local p=$1 etc
    etc=$(shipped_etc "$p")
    mkdir -p "$S/etc/$p"
    rm -rf "$S/etc/$p/rootwrap.d"; cp -r "$etc/rootwrap.d" "$S/etc/$p/"
    sed -e "s#^filters_path=.*#filters_path=$S/etc/$p/rootwrap.d#" \
        -e "s#^exec_dirs=#exec_dirs=$VENV/bin,#" "$etc/rootwrap.conf" \
        | write_if_changed "$S/etc/$p/rootwrap.conf" || true
}

# service_head LOG DB_SECTION DB: a service's [DEFAULT] log file ($S/logs/LOG.log) and database
service_head() {
    printf '[DEFAULT]\nlog_file = %s\n[%s]\nconnection = %s\n' "$S/logs/$1.log" "$2" "$(db_url "$3")"
}

# bcrypt's cost for the passwords Keystone hashes: its minimum. At Keystone's default (12) each
# password check took 0.8 s of CPU here, and Rally, tempest and the tools log in as admin (or as
# users they create) hundreds of times a run: about 13 CPU-minutes of an e2e run, taken from the
# instances being measured. The AIO listens on loopback only.
KEYSTONE_HASH_ROUNDS=4
# Present once the admin's password is hashed at that cost: made by the bootstrap of a new state
# (init_databases), or by start_keystone setting an older state's admin password again.
ADMIN_HASHED_STAMP=$S/data/.admin_hash_rounds_$KEYSTONE_HASH_ROUNDS

write_keystone_conf() {
    mkdir -p "$S/etc/keystone"
    { service_head keystone database keystone
      cat <<EOF
[token]
provider = fernet
[fernet_tokens]
key_repository = $S/data/keystone/fernet-keys
[fernet_receipts]
key_repository = $S/data/keystone/fernet-keys
[credential]
key_repository = $S/data/keystone/credential-keys
[identity]
password_hash_rounds = $KEYSTONE_HASH_ROUNDS
EOF
    } | write_if_changed "$S/etc/keystone/keystone.conf" || true
    # Made here, before init_databases' keystone-manage fills them, and owner-only (install -d
    # also fixes an older state's 0755): Keystone warns on every token it makes or checks while
    # its key directories are readable by others (most of keystone.log was that warning)
    install -d -m 0700 "$S/data/keystone/fernet-keys" "$S/data/keystone/credential-keys"
}

write_placement_conf() {
    mkdir -p "$S/etc/placement"
    { service_head placement placement_database placement
      cat <<EOF
[api]
auth_strategy = keystone
EOF
      ks_auth keystone_authtoken placement "$PLACEMENT_PASS"; } | write_if_changed "$S/etc/placement/placement.conf" || true
}

write_glance_conf() {
    mkdir -p "$S/etc/glance" "$S/data/glance/"{images,staging,tasks}
    cp "$(shipped_etc glance)/glance-api-paste.ini" "$S/etc/glance/"
    { cat <<EOF
[DEFAULT]
log_file = $S/logs/glance-api.log
enabled_backends = file:file
[database]
connection = $(db_url glance)
[glance_store]
default_backend = file
[file]
filesystem_store_datadir = $S/data/glance/images
[os_glance_staging_store]
filesystem_store_datadir = $S/data/glance/staging
[os_glance_tasks_store]
filesystem_store_datadir = $S/data/glance/tasks
[paste_deploy]
flavor = keystone
EOF
      ks_auth keystone_authtoken glance "$GLANCE_PASS"; } | write_if_changed "$S/etc/glance/glance-api.conf" || true
}

# nova.conf: shared by api, conductor, scheduler and every nova-compute; each compute adds its
# own overlay file (etc/nova/compute-NAME.conf, see computes.d/).
write_nova_conf() {
    mkdir -p "$S/etc/nova" "$S/data/nova/locks"
    cp "$(shipped_etc nova)/api-paste.ini" "$S/etc/nova/"
    copy_rootwrap nova
    install_driver_rootwrap_filters
    { cat <<EOF
[DEFAULT]
transport_url = $(rabbit_url)
host = $AIO_HOST
my_ip = 127.0.0.1
rootwrap_config = $S/etc/nova/rootwrap.conf
state_path = $S/data/nova
[wsgi]
api_paste_config = $S/etc/nova/api-paste.ini
[api_database]
connection = $(db_url nova_api)
[database]
connection = $(db_url nova)
[conductor]
workers = 1
[scheduler]
workers = 1
# hosts in an aggregate with trait:T=required metadata take only servers whose image or
# flavor requires T: the Docker hosts' aggregates require CUSTOM_NOVA_DOCKER (the Docker
# driver's trait, carried by the Docker image), so no other image lands there
enable_isolated_aggregate_filtering = true
discover_hosts_in_cells_interval = -1
[filter_scheduler]
# Nova's default filters, plus the same_host / different_host scheduler hints: the netperf
# peer placement of VMCT.boot_and_benchmark (peer_placement); and the tenant filter: a host in
# an aggregate with filter_tenant_id metadata takes only those projects' servers (the Docker
# hosts when VMCT_AIO_DOCKER_PROJECTS names projects, lib/common.sh; none otherwise)
enabled_filters = ComputeFilter,ComputeCapabilitiesFilter,ImagePropertiesFilter,ServerGroupAntiAffinityFilter,ServerGroupAffinityFilter,SameHostFilter,DifferentHostFilter,AggregateMultiTenancyIsolation
[oslo_concurrency]
lock_path = $S/data/nova/locks
[os_vif_ovs]
# os-vif (every compute's, the Docker driver's too) on OVSDB's unix socket: no TCP remote
ovsdb_connection = unix:$VMCT_OVSDB_SOCKET
[vif_plug_ovs_privileged]
# what os-vif's privsep context declares; its daemon got CAP_DAC_OVERRIDE too, the default of
# os-vif's test context, which shares this section and is defined after it
capabilities = CAP_NET_ADMIN
[vnc]
enabled = false
[glance]
region_name = RegionOne
[notifications]
notification_format = versioned
# instance.update after every state save: tools/bench/timer-accuracy's millisecond truth
notify_on_state_change = vm_and_task_state
[oslo_messaging_notifications]
# versioned notifications (microsecond timestamps) in each service's log: an observer
# independent of the API for tools/bench/timer_accuracy.py; no queue fills up unread
driver = log
EOF
      ks_auth keystone_authtoken nova "$NOVA_PASS"
      ks_auth service_user nova "$NOVA_PASS"; echo "send_service_user_token = true"
      ks_auth placement placement "$PLACEMENT_PASS"
      ks_auth neutron neutron "$NEUTRON_PASS"; nova_metadata_proxy
    } | write_if_changed "$S/etc/nova/nova.conf" || true
}

# Nova's metadata API (lib/services.sh) behind the OVN metadata agent's proxy; under ML2/OVS
# there is none (instances read their config drive)
NOVA_METADATA_PORT=8775
nova_metadata_proxy() {
    if [ "$AIO_NEUTRON" = ovn ]; then
        printf 'service_metadata_proxy = true\nmetadata_proxy_shared_secret = %s\n' "$METADATA_PASS"
    else
        echo "service_metadata_proxy = false"
    fi
}

NEUTRON_CFGS="$S/etc/neutron/neutron.conf $S/etc/neutron/plugins/ml2/ml2_conf.ini"
write_neutron_conf() {
    mkdir -p "$S/etc/neutron/plugins/ml2" "$S/data/neutron/locks"
    cp "$(shipped_etc neutron)/api-paste.ini" "$S/etc/neutron/"
    copy_rootwrap neutron
    { cat <<EOF
[DEFAULT]
core_plugin = ml2
# routers for Rally's network context and the floating IPs on the external network
service_plugins = $(neutron_router_plugin)
auth_strategy = keystone
transport_url = $(rabbit_url)
host = $AIO_HOST
state_path = $S/data/neutron
api_paste_config = $S/etc/neutron/api-paste.ini
rpc_workers = 1
rpc_state_report_workers = 1
notify_nova_on_port_status_changes = true
notify_nova_on_port_data_changes = true
[database]
connection = $(db_url neutron)
[oslo_concurrency]
lock_path = $S/data/neutron/locks
[agent]
root_helper =
report_interval = 10
EOF
      [ "$AIO_NEUTRON" = ovn ] && printf '# no DHCP agent: OVN answers DHCP itself\ndhcp_agent_notification = false\n'
      ks_auth keystone_authtoken neutron "$NEUTRON_PASS"
      ks_auth nova nova "$NOVA_PASS"; } | write_if_changed "$S/etc/neutron/neutron.conf" || true
    write_ml2_conf
    "write_${AIO_NEUTRON}_agent_confs"
}

# the L3 service plugin of the backend: the L3 agent's, or OVN's own routers
neutron_router_plugin() { if [ "$AIO_NEUTRON" = ovn ]; then echo ovn-router; else echo router; fi; }

# ml2_conf.ini: under both backends tenant networks are VLANs on physnet1 (vmct-net is flat
# there) and security groups are enforced; then the backend's own settings.
# ML2/OVN: Geneve under the userspace datapath would need its endpoint address on an OVS bridge,
# and userspace TSO serves flat and VLAN networks only.
write_ml2_conf() {
    local mechanism=openvswitch
    [ "$AIO_NEUTRON" = ovs ] || mechanism=ovn
    { cat <<EOF
[ml2]
type_drivers = flat,vlan
tenant_network_types = vlan
mechanism_drivers = $mechanism
extension_drivers = port_security
[ml2_type_flat]
flat_networks = physnet1
[ml2_type_vlan]
network_vlan_ranges = physnet1:100:200
[securitygroup]
enable_security_group = true
EOF
      "ml2_${AIO_NEUTRON}_settings"; } | write_if_changed "$S/etc/neutron/plugins/ml2/ml2_conf.ini" || true
}

# ML2/OVS: security groups are enforced by $AIO_FIREWALL (VMCT_AIO_FIREWALL): "openvswitch" by
# default, the OVS agent's conntrack-based firewall (the userspace datapath has its own
# conntrack), as most ML2/OVS clouds run; "iptables_hybrid" plugs ports through a Linux bridge
# whose iptables rules enforce them.
ml2_ovs_settings() { echo "firewall_driver = $AIO_FIREWALL"; }

# OVN's databases on loopback (lib/infra.sh start_ovn_central)
OVN_NB=tcp:127.0.0.1:6641
OVN_SB=tcp:127.0.0.1:6642

# ML2/OVN: security groups as OVN ACLs, DHCP answered by each port's ovn-controller, routers
# and floating IPs on the gateway chassis $AIO_HOST, the metadata agent
ml2_ovn_settings() {
    cat <<EOF
[ovn]
ovn_nb_connection = $OVN_NB
ovn_sb_connection = $OVN_SB
ovn_metadata_enabled = true
enable_distributed_floating_ip = false
neutron_sync_mode = log
EOF
}

# ML2/OVS: the DHCP and L3 agents, the main host's OVS agent
write_ovs_agent_confs() {
    # veth pairs instead of OVS internal ports: with the netdev datapath internal ports are taps
    # that OVS re-creates in the root namespace after an ovs-vswitchd restart (DHCP dies).
    write_if_changed "$S/etc/neutron/dhcp_agent.ini" <<EOF || true
[DEFAULT]
interface_driver = openvswitch
ovs_use_veth = true
dhcp_driver = neutron.agent.linux.dhcp.Dnsmasq
enable_isolated_metadata = false
[ovs]
ovsdb_connection = unix:$VMCT_OVSDB_SOCKET
EOF
    # routers live in qrouter- namespaces of this host and route only between tenant subnets
    write_if_changed "$S/etc/neutron/l3_agent.ini" <<EOF || true
[DEFAULT]
interface_driver = openvswitch
ovs_use_veth = true
agent_mode = legacy
[ovs]
ovsdb_connection = unix:$VMCT_OVSDB_SOCKET
EOF
    write_ovs_agent_conf "$S/etc/neutron/openvswitch_agent.ini" "$AIO_HOST" br-int br-ex 6633
}

# ML2/OVN: the metadata agent (on the main host's chassis)
write_ovn_agent_confs() {
    write_if_changed "$S/etc/neutron/neutron_ovn_metadata_agent.ini" <<EOF || true
[DEFAULT]
nova_metadata_host = 127.0.0.1
nova_metadata_port = $NOVA_METADATA_PORT
metadata_proxy_shared_secret = $METADATA_PASS
metadata_workers = 1
state_path = $S/data/neutron
[ovs]
ovsdb_connection = unix:$VMCT_OVSDB_SOCKET
[ovn]
ovn_sb_connection = $OVN_SB
EOF
}

# write_ovs_agent_conf FILE HOST INTEGRATION_BRIDGE PHYS_BRIDGE OPENFLOW_PORT
# No OVS kernel module on this kind of machine: userspace datapath (netdev).
write_ovs_agent_conf() {
    write_if_changed "$1" <<EOF || true
[DEFAULT]
host = $2
[ovs]
datapath_type = netdev
integration_bridge = $3
bridge_mappings = physnet1:$4
ovsdb_connection = unix:$VMCT_OVSDB_SOCKET
of_listen_address = 127.0.0.1
of_listen_port = $5
[agent]
tunnel_types =
[securitygroup]
enable_security_group = true
firewall_driver = $AIO_FIREWALL
EOF
}

write_all_configs() {
    write_keystone_conf
    write_placement_conf
    write_glance_conf
    write_nova_conf
    write_neutron_conf
    write_compute_configs
}
