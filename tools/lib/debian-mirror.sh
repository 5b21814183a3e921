# shellcheck shell=bash
# debian_mirror SUITE: the Debian mirror this machine already uses for SUITE (the first URIs
# of a deb822 stanza serving it, else the first sources.list line), deb.debian.org otherwise.
# debootstrap takes it, so image builds fetch from where apt does.
debian_mirror() {
    local suite=$1 uri='' sources=${VMCT_APT_SOURCES:-/etc/apt/sources.list.d/debian.sources}
    if [ -f "$sources" ]; then
        uri=$(awk -v suite="$suite" '
            /^URIs:/ {u=$2}
            /^Suites:/ {for (i = 2; i <= NF; i++) if ($i == suite) {print u; exit}}
            /^$/ {u=""}' "$sources")
    fi
    if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
        uri=$(awk -v suite="$suite" '$1 == "deb" && $3 == suite {print $2; exit}' /etc/apt/sources.list)
    fi
    echo "${uri:-http://deb.debian.org/debian}"
}
