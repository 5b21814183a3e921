"""Helpers shared by rally-vmct scenarios: server waiter, reachability probes, SSH.

Modules here import neither Rally's task machinery nor OpenStack clients unless
their docstring says so (``ssh`` uses Rally's SSH class), so they can be unit
tested with fake clients, a fake clock and no cloud.
"""
