"""Nova and Placement in one process: the ``Cloud`` fixture and its parts.

Importing any module here imports Nova (and lets it patch the process for
eventlet).
"""
