"""rally-vmct: compare KVM, Docker (both through Nova) and bare metal with Rally."""
