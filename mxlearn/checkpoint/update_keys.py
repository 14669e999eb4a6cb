"""How an optimizer's Updater names the weights, so a checkpoint resumes on other devices.

MXNet's Updater keeps each weight's state (momentum, ...) and update count under a key that
depends on where the update runs: the parameter's name when a kvstore updates (several devices,
``update_on_kvstore``), else ``index * num_devices + device`` (one device: the index). A state
saved on two devices and loaded on one would sit under keys nobody reads: momentum and counts
would silently start again. Checkpoints therefore store states under the parameter's name
(``name``, or ``name@k`` per device), and a resume puts them under the keys the module in front
of it uses.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class UpdateKeys:
    param_names: tuple[str, ...]
    num_device: int
    by_name: bool  # a kvstore updates: keys are parameter names
    device_ids: tuple[int, ...] = (0,)  # of the module's devices (MXNet counts per device id)

    def canonical(self, key) -> str:
        """The name a checkpoint stores ``key`` under."""
        if isinstance(key, str):
            return key
        name = self.param_names[key // self.num_device]
        return f"{name}@{key % self.num_device}"

    def live(self, saved: dict) -> dict:
        """``saved`` (canonical name -> value) under this module's keys; a value saved for one
        device serves every device (they hold the same weights)."""
        by_weight: dict = {}
        for name, value in saved.items():
            weight, _, device = name.partition("@")
            by_weight.setdefault(weight, {})[int(device) if device else 0] = value
        found = {}
        for index, name in enumerate(self.param_names):
            copies = by_weight.get(name)
            if not copies:
                continue
            first = copies.get(0, next(iter(copies.values())))
            if self.by_name:
                found[name] = first
                continue
            for device in range(self.num_device):
                found[index * self.num_device + device] = copies.get(device, first)
        return found
