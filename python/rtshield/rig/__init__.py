"""The rig: real flood tools against real targets, in network namespaces it creates and removes.

* :mod:`rtshield.rig.harness` -- namespaces, veth pair, addresses, flood tool
  launchers, counters and cleanup; shared by every target.
* :mod:`rtshield.rig.linux` -- the controller study of arXiv 2007.08885 on this kernel.
* :mod:`rtshield.rig.cycles` -- the control task's cycle files.
* :mod:`rtshield.rig.results` -- tables, histograms, summary.json, report.html.

Documentation: docs/rig.md.
"""
