"""The calibration's limits, in a module that imports nothing, so that ``rtshield
calibrate --help``, which states them, imports no part of the calibration."""

#: The most points one calibration may run.
MAX_BUDGET = 5000
