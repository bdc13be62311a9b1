"""One module per CLI verb, named after it (``rtshield.cli`` says how each is
registered), and :data:`VERBS`, each verb's one-line help: the one home of
that line, read by ``rtshield --help`` without importing any verb's module
(``rtshield VERB`` imports that verb's alone)."""

#: Every verb and its one-line help, in the order ``rtshield --help`` lists them
#: (sorted). A verb's module has the verb's name.
VERBS = {
    "analyze": "worst-case response-time analysis of a SYSTEM.toml (or of a scenario's device)",
    "calibrate": (
        "search a model's unknown parameters against published claims or measured counters"
    ),
    "compare": "run several scenarios and write one comparative report",
    "demo": (
        "reproduce the papers' studies (Danicki et al., Behnke et al., Regehr & Duongsaa): "
        "one report"
    ),
    "design": 'find the most generous safe value of a protection parameter ("?" or --knob)',
    "rig": "real flood tools (hping3, ARP flood, nmap, stress-ng) against real targets",
    "run": "simulate one scenario and write summary, time series, figures and a report",
    "schema": "print the JSON Schema of scenario files (for editors)",
    "server": "keep rtshield loaded in a resident server, so that short commands start at once",
    "sweep": "run one scenario over a grid of parameter values (on Dask)",
}
