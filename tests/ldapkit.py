"""A real OpenLDAP server (Debian's slapd) on a free loopback port, with a small directory in it.

It runs from a private slapd.conf and database directory, with the memberof overlay (so entries carry
``memberOf``, as in Active Directory) and groupOfNames groups (for a group search).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

SUFFIX = "dc=example,dc=org"
ADMIN_DN = f"cn=admin,{SUFFIX}"
ADMIN_PASSWORD = "slapd-test-secret"

CONF = """
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
modulepath /usr/lib/ldap
moduleload back_mdb
moduleload memberof
pidfile {root}/slapd.pid
database mdb
maxsize 10485760
suffix "{suffix}"
rootdn "{admin}"
rootpw {password}
directory {root}/db
overlay memberof
"""

LDIF = """dn: {suffix}
objectClass: dcObject
objectClass: organization
o: Clinic
dc: example

dn: ou=people,{suffix}
objectClass: organizationalUnit
ou: people

dn: ou=groups,{suffix}
objectClass: organizationalUnit
ou: groups

dn: uid=rita,ou=people,{suffix}
objectClass: inetOrgPerson
uid: rita
cn: Rita Records
sn: Records
mail: rita@clinic.example

dn: uid=oscar,ou=people,{suffix}
objectClass: inetOrgPerson
uid: oscar
cn: Oscar Other
sn: Other
mail: oscar@clinic.example

dn: cn=Records,ou=groups,{suffix}
objectClass: groupOfNames
cn: Records
member: uid=rita,ou=people,{suffix}

dn: cn=Staff,ou=groups,{suffix}
objectClass: groupOfNames
cn: Staff
member: uid=rita,ou=people,{suffix}
member: uid=oscar,ou=people,{suffix}
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Slapd:
    def __init__(self) -> None:
        if shutil.which("slapd", path="/usr/sbin:/usr/bin") is None or shutil.which("ldapadd") is None:
            if os.environ.get("SANIGATE_CI"):
                raise RuntimeError("slapd and ldap-utils are missing (.ci/run installs them)")
            pytest.skip("needs Debian's slapd and ldap-utils (CI installs them: .ci/run)")
        self.root = Path(tempfile.mkdtemp(prefix="sanigate-slapd-"))
        (self.root / "db").mkdir()
        (self.root / "slapd.conf").write_text(
            CONF.format(root=self.root, suffix=SUFFIX, admin=ADMIN_DN, password=ADMIN_PASSWORD)
        )
        self.port = _free_port()
        self.url = f"ldap://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()
        ldif = self.root / "data.ldif"
        ldif.write_text(LDIF.format(suffix=SUFFIX))
        subprocess.run(["ldapadd", "-x", "-H", self.url, "-D", ADMIN_DN, "-w", ADMIN_PASSWORD, "-f", str(ldif)],
                       check=True, capture_output=True, timeout=30)  # fmt: skip

    def start(self) -> None:
        slapd = shutil.which("slapd", path="/usr/sbin:/usr/bin")
        assert slapd is not None
        self.proc = subprocess.Popen([slapd, "-f", str(self.root / "slapd.conf"), "-h", f"{self.url}/", "-d", "0"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError("slapd did not start") from None
                time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(20)
        self.proc = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)
