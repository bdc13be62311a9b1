"""The rig: real flood tools against real targets, in network namespaces it creates and removes.

Bottom up (a module imports only those below it):

* :mod:`~rtshield.rig.network` (names, addresses), :mod:`~rtshield.rig.host`
  (root, tools, :class:`~rtshield.rig.host.RigError`), :mod:`~rtshield.rig.cycles`
  (the control task's cycle files), :mod:`~rtshield.rig.modbus_client` and
  :mod:`~rtshield.rig.pcap_replay` (processes the FreeRTOS target starts);
* :mod:`~rtshield.rig.attacks` (the flood tools' command lines),
  :mod:`~rtshield.rig.counters`, :mod:`~rtshield.rig.timing` (clock, procedure length),
  :mod:`~rtshield.rig.owners` (who owns a run: what ``rig clean`` spares);
* :mod:`rtshield.rig.harness` -- namespaces, veth pair, processes, cleanup; shared by
  every target;
* the targets: :mod:`rtshield.rig.linux` (the controller study of arXiv 2007.08885 on
  this kernel) and :mod:`rtshield.rig.freertos` (FreeRTOS-Plus-TCP with libshield);
* :mod:`rtshield.rig.results` -- the Linux target's tables, histograms, summary.json,
  report.html.

Documentation: docs/rig.md.
"""
