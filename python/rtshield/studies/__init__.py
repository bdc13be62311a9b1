"""The papers' published claims, as checks on simulated results (one module per study).

``STUDIES`` names the studies ``rtshield demo --study NAME`` runs, in the order
``rtshield demo`` (all of them) puts them in its report:

* ``danicki`` — Danicki et al. §3 (:mod:`rtshield.studies.danicki2021`,
  ``scenarios/danicki2021/``);
* ``behnke-software`` — Behnke et al. §6, the software approach
  (:mod:`rtshield.studies.behnke_software`, ``scenarios/behnke_software/``);
* ``behnke-hardware`` — Behnke et al. §8, the hardware approach
  (:mod:`rtshield.studies.behnke_hardware`, ``scenarios/behnke_hardware/``);
* ``regehr`` — Regehr & Duongsaa §§6–7 (:mod:`rtshield.studies.regehr2005`,
  ``scenarios/regehr2005/``).
"""

#: ``{name: title}`` of every study, in report order.
STUDIES = {
    "danicki": "Danicki et al. (EdgeSys 2021) §3: mitigations on the ESP32",
    "behnke-software": "Behnke et al. §6: the software approach on the Zynq-7000",
    "behnke-hardware": "Behnke et al. §8: the hardware approach (multiqueue NIC) on the ESP32",
    "regehr": "Regehr & Duongsaa (LCTES 2005) §§6–7: interrupt schedulers on the AVR",
}
