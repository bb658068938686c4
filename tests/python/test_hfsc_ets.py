# SPDX-License-Identifier: Apache-2.0
"""hfsc and ets through the Python front end (issue 23): `airsched import` reads what iproute2 6.1
prints of them (text, and tc -j, which for hfsc is not JSON: q_hfsc.c prints its options with
fprintf inside the braces) back into tc commands that rebuild the same tree; `airsched export`
writes them."""

from __future__ import annotations

from pathlib import Path

from airsched import _core
from airsched.importer import DeviceInput, import_devices

CORPUS = Path(__file__).parent / "kernel_corpus"


def _shown(text: str) -> tuple[str, str]:
    d = _core.tc_check(text, "imported.tc", [("eth0", 1000)])["devices"][0]
    return d["qdisc_text"], d["class_text"]


def _roundtrip(script: str) -> None:
    """airsched's own show text of `script`, imported, rebuilds the same show text."""
    q, c = _shown(script)
    # `tc qdisc show` (without `invisible`) does not list the default pfifos of the classes.
    q = "".join(line + "\n" for line in q.splitlines() if " 0: parent " not in line)
    r = import_devices([DeviceInput("eth0", q, c, {})])
    q2, c2 = _shown(r.text)
    assert ("".join(line + "\n" for line in q2.splitlines() if " 0: parent " not in line), c2) == (q, c), r.text


def test_hfsc_tree_imports_from_text() -> None:
    # The OpenWrt qos-scripts-like tree of the corpus (pfifo leaves instead of fq_codel, whose
    # text form the importer does not read, and without its fw filters), and every curve form.
    text = (CORPUS / "111-hfsc-openwrt-qos.tc").read_text().replace("fq_codel limit 800 quantum 300 noecn", "pfifo limit 80")
    _roundtrip("\n".join(line for line in text.splitlines() if "filter" not in line) + "\n")
    _roundtrip((CORPUS / "113-hfsc-curve-forms.tc").read_text())
    _roundtrip((CORPUS / "116-hfsc-leaf-qdisc-kept.tc").read_text().replace("tc filter", "# tc filter"))


def test_hfsc_imports_from_iproute2_61_json() -> None:
    # tc -j of iproute2 6.1: hfsc's options are words inside the braces.
    q = '[{"kind":"hfsc","handle":"1:","root":true,"refcnt":2,"options":{default 20 }}]'
    c = ('[{"class":"hfsc","handle":"1:","root":true,"options":{}},'
         '{"class":"hfsc","handle":"1:20","parent":"1:","options":{sc m1 0bit d 0us m2 10Mbit ul m1 0bit d 0us m2 20Mbit }}]')
    r = import_devices([DeviceInput("eth0", q, c, {})])
    assert "tc qdisc add dev eth0 root handle 1: hfsc default 20" in r.text
    assert "tc class add dev eth0 parent 1: classid 1:20 hfsc sc m1 0bit d 0us m2 10Mbit ul m1 0bit d 0us m2 20Mbit" in r.text
    # The root class comes with the qdisc and is not added.
    assert "classid 1: " not in r.text
    _, classes = _shown(r.text)
    assert "class hfsc 1:20 parent 1: sc m1 0bit d 0us m2 10Mbit ul m1 0bit d 0us m2 20Mbit" in classes


def test_ets_imports_from_text_and_json() -> None:
    text = (CORPUS / "120-ets-strict-priomap.tc").read_text().replace("tc filter", "# tc filter")
    _roundtrip(text.replace("fq_codel", "pfifo limit 30"))
    q = ('[{"kind":"ets","handle":"1:","root":true,"refcnt":2,"options":{"bands":4,"strict":1,'
         '"quanta":[3000,1514,700],"priomap":[3,2,1,0,3,3,3,3,3,3,3,3,3,3,3,3]}}]')
    r = import_devices([DeviceInput("eth0", q, "", {})])
    assert "ets bands 4 strict 1 quanta 3000 1514 700 priomap 3 2 1 0 3" in r.text
    qt, _ = _shown(r.text)
    assert "qdisc ets 1: root refcnt 2 bands 4 strict 1 quanta 3000 1514 700 priomap 3 2 1 0 3 3 3 3 3 3 3 3 3 3 3 3" in qt


def test_hfsc_and_ets_errors_are_one_line_at_the_word() -> None:
    for text, where in (
        ("tc qdisc add dev eth0 root handle 1: hfsc\ntc class add dev eth0 parent 1: classid 1:1 hfsc ul m2 1mbit\n", "2:"),
        ("tc qdisc add dev eth0 root handle 1: ets bands 2 priomap 0 3\n", "1:"),
    ):
        try:
            _core.tc_check(text, "x.tc", [("eth0", 1000)])
        except _core.ScenarioError as exc:
            errors = getattr(exc, "errors", None) or str(exc).splitlines()
            assert len(errors) == 1 and errors[0].startswith(f"x.tc:{where}"), errors
        else:
            raise AssertionError(f"accepted: {text}")


def test_an_ets_qdisc_change_resets_the_quanta_a_class_change_set() -> None:
    # ets_qdisc_change (Linux 6.1) writes every band's quantum from the new command: the band a
    # class change gave 5000 bytes gets the qdisc's 2000 again; without the qdisc change it keeps
    # its 5000.
    base = ("tc qdisc add dev eth0 root handle 1: ets bands 3 quanta 1000 2000 3000\n"
            "tc class change dev eth0 classid 1:2 ets quantum 5000\n")
    def quanta(text: str) -> list[str]:
        shown = _core.tc_check(text, "t.tc", [("eth0", 1000)])["devices"][0]["class_text"]
        return [line.split("quantum ")[1].split()[0] for line in shown.splitlines() if "quantum" in line]
    assert quanta(base) == ["1000", "5000", "3000"]
    assert quanta(base + "tc qdisc change dev eth0 root handle 1: ets bands 3 quanta 1000 2000 3000\n") == ["1000", "2000", "3000"]
