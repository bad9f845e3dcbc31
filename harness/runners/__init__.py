"""What runs scenarios: run, reproduce, explore, determinism, the CLI.

They use the cloud through its public methods and the runner's observer
hooks.
"""
