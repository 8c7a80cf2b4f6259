"""The admin interface in a real headless Chromium (Debian's chromium + chromium-driver, via Selenium).

An administrator logs in, finds the held message, reads the highlighted
change and its explanation, releases it (the release reaches a real SMTP
capture server), and finds the release in the audit log. With
SANIGATE_SCREENSHOTS=DIR the main pages are saved there as PNG.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from adminkit import PASSWORDS, RunningAdmin, fill_store, write_config
from gatewaykit import ThreadedCapture

from gateway.config import load_config
from gateway.model.engine import Engine
from gateway.store.base import AuditQuery
from gateway.store.sqlite import SQLiteStore

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

# CI (SANIGATE_CI=1) installs them: there a missing browser fails the run instead of skipping it.
pytestmark = pytest.mark.skipif(
    not (Path(CHROMIUM).exists() and Path(DRIVER).exists()) and not os.environ.get("SANIGATE_CI"),
    reason="needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver; CI installs them)",
)


@pytest.fixture
def browser() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=1440,1000",
        "--disable-gpu",
        "--no-first-run",
    ):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=DRIVER))
    driver.implicitly_wait(5)
    yield driver
    driver.quit()


def _shot(driver: Any, name: str) -> None:
    folder = os.environ.get("SANIGATE_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(folder) / f"{name}.png"))


def _replaced(old: Any) -> Callable[[Any], bool]:
    """Whether the page that held ``old`` is gone. While the next page replaces it, chromedriver may answer a
    question about the old node with an inspector error ("Node with given id does not belong to the document")
    instead of a stale reference: that is the same answer (it failed CI once as an error)."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    def gone(_driver: Any) -> bool:
        try:
            old.is_enabled()
        except StaleElementReferenceException:
            return True
        except WebDriverException as exc:
            if "does not belong to the document" in (exc.msg or ""):
                return True
            raise
        return False

    return gone


def test_review_and_release_in_a_real_browser(tmp_path: Path, engine: Engine, browser: Any) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    capture = ThreadedCapture()
    config_path = write_config(tmp_path, capture.port)
    store = SQLiteStore(load_config(config_path).store.path)
    ids = fill_store(store, config_path, engine)
    admin = RunningAdmin(config_path, store)
    try:
        b = browser
        b.get(admin.url + "/queue")
        assert b.current_url.endswith("/login")  # not logged in: sent to the login page
        _shot(b, "login")
        WebDriverWait(b, 10).until(lambda d: d.find_elements(By.NAME, "username"))
        b.find_element(By.NAME, "username").send_keys("alice")
        b.find_element(By.NAME, "password").send_keys(PASSWORDS["alice"])
        b.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
        assert b.find_element(By.ID, "whoami").text == "alice (admin)"

        # Find the held message through the filter form.
        b.find_element(By.CSS_SELECTOR, "select[name=status] option[value=held]").click()
        b.find_element(By.CSS_SELECTOR, ".filters button[type=submit]").click()
        WebDriverWait(b, 10).until(lambda d: "status=held" in d.current_url)
        rows = b.find_elements(By.CSS_SELECTOR, "#queue tbody tr")
        assert len(rows) == 2 and all("held" in r.text for r in rows)
        _shot(b, "queue")
        b.find_element(By.CSS_SELECTOR, f"a[href='/messages/{ids['held']}']").click()

        # Why it was held: the term and the part, not only a reason code.
        cause = b.find_element(By.ID, "hold-cause").text
        assert "HIV" in cause and "1 text/plain" in cause and "line 2" in cause

        # The change is highlighted on both sides, and its explanation shows on hover.
        removed = [e.text for e in b.find_elements(By.CSS_SELECTOR, ".original .change del")]
        added = [e.text for e in b.find_elements(By.CSS_SELECTOR, ".sanitized .change ins")]
        assert "HIV" in removed and added and "HIV" not in " ".join(added)
        change = b.find_element(By.CSS_SELECTOR, ".sanitized .change")
        tip = change.find_element(By.CSS_SELECTOR, ".tip")
        assert not tip.is_displayed()
        ActionChains(b).move_to_element(change).perform()
        assert tip.is_displayed()
        assert "PMI" in tip.text and "threshold" in tip.text and "entity HIV" in tip.text
        assert "chosen" in tip.text  # the generalization chain, with the step taken
        _shot(b, "message")

        b.find_element(By.CSS_SELECTOR, "#release-sanitized button").click()
        WebDriverWait(b, 10).until(lambda d: "done=released" in d.current_url)
        assert "Released through the relay" in b.find_element(By.CSS_SELECTOR, "p.ok").text
        assert b.find_element(By.ID, "status").text == "released"
        (sent,) = capture.handler.messages
        assert b"HIV" not in sent.data and sorted(sent.recipients) == ["a@example.com", "b@example.com"]
        assert "alice" in b.find_element(By.ID, "history").text

        # The audit log shows the release, by whom.
        b.find_element(By.LINK_TEXT, "Audit log").click()
        b.find_element(By.CSS_SELECTOR, "select[name=kind] option[value=action]").click()
        old = b.find_element(By.ID, "audit")
        b.find_element(By.CSS_SELECTOR, "#audit-search button[type=submit]").click()
        WebDriverWait(b, 10).until(_replaced(old))
        text = b.find_element(By.ID, "audit").text
        assert "released" in text and "alice" in text and ids["held"] in text
        (action,) = store.audit(AuditQuery(message_id=ids["held"], kind="action"))
        assert action.action == "released" and action.actor == "alice"
        _shot(b, "audit")

        b.find_element(By.LINK_TEXT, "Dashboard").click()
        assert len(b.find_elements(By.CSS_SELECTOR, ".charts svg")) == 4
        _shot(b, "dashboard")

        # A message carrying HTML and script is shown as text, and nothing of it runs.
        b.get(f"{admin.url}/messages/{ids['hostile']}")
        assert b.execute_script("return typeof window.pwned") == "undefined"
        assert b.find_elements(By.CSS_SELECTOR, "#compare script, #compare img") == []
        assert "<script>window" in b.find_element(By.ID, "compare").text
    finally:
        admin.close()
        store.close()
        capture.close()
