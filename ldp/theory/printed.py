"""The p*, q* the USENIX'17 slides print for each pure oracle ([FO] Secs. 4.1-4.4), for
the report's check that every oracle object declares them (p/q = e^ε)."""

from __future__ import annotations

from ldp.theory.frequency import blh_pq, grr_pq, olh_pq, oue_pq, sue_pq

#: The oracles whose slides print p and q with p/q = e^ε (per pair of bits for the unary
#: encodings): DE, SUE, OUE, BLH and OLH ([FO] Secs. 4.1-4.4).
PRINTED_PQ_PROTOCOLS = ("GRR", "SUE", "OUE", "BLH", "OLH")


def printed_pq(protocol: str, epsilon: float, d: int, g: int | None = None) -> tuple[float, float]:
    """The p*, q* the slides print for one of :data:`PRINTED_PQ_PROTOCOLS` at (ε, d); OLH
    takes its hash range ``g`` (the object's own, an integer)."""
    name = protocol.upper()
    if name in ("GRR", "DE"):
        return grr_pq(epsilon, d)
    if name == "OLH":
        if g is None:
            raise ValueError("OLH's p*, q* need its hash range g")
        return olh_pq(epsilon, g)
    formulas = {"SUE": sue_pq, "OUE": oue_pq, "BLH": blh_pq}
    if name not in formulas:
        raise ValueError(f"protocol must be one of {PRINTED_PQ_PROTOCOLS}; got {protocol!r}")
    return formulas[name](epsilon)
