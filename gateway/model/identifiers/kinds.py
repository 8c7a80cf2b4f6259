"""The kinds of identifier, and the names a policy may use for sets of them.

The Safe Harbor kinds follow HIPAA §164.514(b)(2)(i) (A)–(R); the TAB kinds
are the categories of the Text Anonymization Benchmark's annotators; both
map to one vocabulary here so that one detector serves both.
"""

from __future__ import annotations

from collections.abc import Iterable

from gateway.errors import ConfigError

PERSON = "PERSON"
ORG = "ORG"
LOC = "LOC"  # a place smaller than a state: city, county, district, building
ADDRESS = "ADDRESS"
ZIP = "ZIP"
DATE = "DATE"
AGE = "AGE"  # only an age over 89 is an identifier under Safe Harbor
DURATION = "DURATION"
PHONE = "PHONE"
FAX = "FAX"
EMAIL = "EMAIL"
SSN = "SSN"
MRN = "MRN"
HEALTH_PLAN = "HEALTH_PLAN"
ACCOUNT = "ACCOUNT"
LICENSE = "LICENSE"  # certificate and licence numbers
VEHICLE = "VEHICLE"
DEVICE = "DEVICE"
URL = "URL"
IP = "IP"
IBAN = "IBAN"
CARD = "CARD"
NATIONAL_ID = "NATIONAL_ID"
CODE = "CODE"  # any other unique number or code (case and file numbers)
DEM = "DEM"  # nationality, ethnicity, religion, profession as an identifying trait
QUANTITY = "QUANTITY"
MISC = "MISC"

ALL_KINDS: tuple[str, ...] = (
    PERSON, ORG, LOC, ADDRESS, ZIP, DATE, AGE, DURATION, PHONE, FAX, EMAIL, SSN, MRN, HEALTH_PLAN, ACCOUNT,
    LICENSE, VEHICLE, DEVICE, URL, IP, IBAN, CARD, NATIONAL_ID, CODE, DEM, QUANTITY, MISC,
)  # fmt: skip

# HIPAA's 18 (photographs and biometrics are not text), plus the financial and national numbers every
# privacy regime names. Organisations are not on the list: an employer is, and is found as ORG only in "all".
SAFE_HARBOR: frozenset[str] = frozenset({
    PERSON, LOC, ADDRESS, ZIP, DATE, AGE, PHONE, FAX, EMAIL, SSN, MRN, HEALTH_PLAN, ACCOUNT, LICENSE,
    VEHICLE, DEVICE, URL, IP, IBAN, CARD, NATIONAL_ID, CODE,
})  # fmt: skip

# The TAB categories in this vocabulary.
TAB_CATEGORY: dict[str, str] = {
    PERSON: "PERSON", ORG: "ORG", LOC: "LOC", ADDRESS: "LOC", ZIP: "LOC", DATE: "DATETIME", DURATION: "DATETIME",
    AGE: "DEM", DEM: "DEM", QUANTITY: "QUANTITY", MISC: "MISC", PHONE: "CODE", FAX: "CODE", EMAIL: "CODE",
    SSN: "CODE", MRN: "CODE", HEALTH_PLAN: "CODE", ACCOUNT: "CODE", LICENSE: "CODE", VEHICLE: "CODE",
    DEVICE: "CODE", URL: "CODE", IP: "CODE", IBAN: "CODE", CARD: "CODE", NATIONAL_ID: "CODE", CODE: "CODE",
}  # fmt: skip

GROUPS: dict[str, frozenset[str]] = {
    "all": frozenset(ALL_KINDS),
    "safe-harbor": SAFE_HARBOR,
    "names": frozenset({PERSON, ORG, LOC}),
    "dates": frozenset({DATE, AGE}),
    "numbers": frozenset(
        {PHONE, FAX, SSN, MRN, HEALTH_PLAN, ACCOUNT, LICENSE, VEHICLE, DEVICE, IBAN, CARD, NATIONAL_ID, CODE}
    ),
    "addresses": frozenset({ADDRESS, ZIP, LOC, EMAIL, URL, IP}),
}


def resolve_kinds(names: Iterable[str]) -> frozenset[str]:
    """Kinds and group names ("all", "safe-harbor", "PHONE", "phone") as a set of kinds."""
    out: set[str] = set()
    for raw in names:
        name = raw.strip()
        if name.lower() in GROUPS:
            out |= GROUPS[name.lower()]
        elif name.upper() in ALL_KINDS:
            out.add(name.upper())
        else:
            known = ", ".join([*GROUPS, *ALL_KINDS])
            raise ConfigError(f"unknown identifier kind {raw!r} (known: {known})")
    return frozenset(out)
