# shellcheck shell=bash
# Sourced by tools that start daemons (tools/aio/lib/common.sh, tools/docker/ensure-dockerd).
# close_inherited_fds: close every file descriptor above 2 this shell inherited. Whatever a
# tool starts from here on (daemons outliving it) must not hold its caller's open files: under
# `flock /tmp/vmct-cloud.lock tools/aio/up` a nova-compute started by up kept the lock file open
# (flock(1) passes it on), so the cloud's lock stayed taken for as long as that compute lived.
close_inherited_fds() {
    local fd
    # ls, not a glob: a glob reads the directory in this shell, whose own directory fd would
    # then be listed, and closed while in use
    # shellcheck disable=SC2045
    for fd in $(ls "/proc/$BASHPID/fd"); do
        [ "$fd" -gt 2 ] && exec {fd}>&-
    done
    return 0
}
