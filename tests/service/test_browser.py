"""Headless Chromium (Debian's, through Selenium and chromedriver) drives the pages of `serve --demo`:
it uploads a zip, waits, reads the score and a failing check's feedback; the button is off while an
upload is sent (one upload), the list fills without a reload, a lost connection is said and outlived,
times are written in the launch's locale and the browser's zone, Bangla draws with the embedded font,
and a hostile file name stays text. Screenshots are kept under test-artifacts/service/ (gitignored)."""

from __future__ import annotations

import re
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from conftest import ROOT, browser, sandbox_works
from served import EXAMPLES, Served, serving

from autograder.config import Kit
from autograder.service import student_pages
from autograder.service.settings import ServiceSettings

CHROMIUM, CHROMEDRIVER = browser("chromium", "chromedriver")  # or the module skips (make test: fails)
ARTIFACTS = ROOT / "test-artifacts" / "service"
GRADED_ROW = '#earlier tr[data-status="graded"]'
NETWORK = {"latency": 0, "download_throughput": -1, "upload_throughput": -1}
# what a Bangla page may hold in Latin letters: code, file kinds, units, the course's names and data
DATA_WORDS = r"`[^`]*`|\.(py|zip|ipynb)\b|\bMB\b|maya\.zip|demo-zone|Building models with nn\.Module"

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support import expected_conditions as until  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


def start_chromium(folder: Path, env: dict[str, str] | None = None) -> WebDriver:
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                 f"--user-data-dir={tempfile.mkdtemp(dir=folder)}", "--window-size=1200,1600"):
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER), env=env))


@pytest.fixture
def chromium(tmp_path: Path) -> Iterator[WebDriver]:
    driver = start_chromium(tmp_path)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def demo(kit: Kit, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    data = tmp_path_factory.mktemp("demo") / "data"
    with serving(ServiceSettings(kit, data, demo=True, sandbox=sandbox_works(kit))) as served:
        yield served


def shot(driver: WebDriver, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    assert driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))


def test_chromium_uploads_a_zip_and_reads_its_feedback(chromium: WebDriver, demo: Served):
    chromium.get(f"{demo.url}/demo")
    chromium.find_element(By.ID, "demo-student").click()
    wait = WebDriverWait(chromium, 120)
    wait.until(until.presence_of_element_located((By.ID, "upload")))
    assert "DEMO" in chromium.find_element(By.ID, "demo-banner").text
    shot(chromium, "1-student-page")
    chromium.find_element(By.ID, "files").send_keys(str(EXAMPLES / "maya.zip"))
    chromium.find_element(By.ID, "submit").click()
    score = wait.until(until.visibility_of_element_located((By.ID, "score")))
    shown = float(score.text)
    expected = demo.state.inbox.of_student("nn_module", "demo-student")[0]
    assert expected.status == "graded" and shown == expected.score and 0 < shown < 100
    wait.until(until.frame_to_be_available_and_switch_to_it((By.ID, "feedback")))
    total = wait.until(until.presence_of_element_located((By.ID, "total")))
    assert float(total.text) == shown
    failing = chromium.find_elements(By.CSS_SELECTOR, ".check.failed")
    assert failing, "a partly wrong submission shows failed checks"
    text = failing[0].text
    assert "✘" in text and ("Observed" in text or "Expected" in text), text
    chromium.switch_to.default_content()
    shot(chromium, "2-feedback")
    chromium.get(f"{demo.url}/student")  # the list of earlier submissions, with the score
    assert f"{shown:g}" in chromium.find_element(By.ID, "earlier").text
    shot(chromium, "3-earlier")


def test_chromium_opens_the_demo_instructor_page_with_the_live_report(chromium: WebDriver, demo: Served):
    chromium.get(f"{demo.url}/demo")
    chromium.find_element(By.ID, "demo-instructor").click()
    wait = WebDriverWait(chromium, 60)
    wait.until(until.presence_of_element_located((By.ID, "regrade-all")))
    assert "DEMO" in chromium.find_element(By.ID, "demo-banner").text
    graded = len(demo.state.inbox.book.current("nn_module"))
    wait.until(until.frame_to_be_available_and_switch_to_it((By.ID, "report")))
    students = wait.until(until.presence_of_element_located((By.ID, "students")))
    assert int(students.text) == graded
    chromium.switch_to.default_content()
    shot(chromium, "4-instructor")


def launch_demo(chromium: WebDriver, demo: Served, who: str, **params: str) -> WebDriverWait[WebDriver]:
    query = "&".join(f"{k}={v}" for k, v in {"as": who, **params}.items())
    chromium.get(f"{demo.url}/demo/student?{query}")
    wait = WebDriverWait(chromium, 180)
    wait.until(until.presence_of_element_located((By.ID, "upload")))
    return wait


class Held:
    """One of the inbox's methods held until `release()`: the server is slow exactly there."""

    def __init__(self, demo: Served, name: str, blocking: bool = True):
        self.inbox = demo.state.inbox
        self.name = name
        self.original: Callable[..., Any] = getattr(self.inbox, name)
        self.gate = threading.Event()
        self.reached = threading.Event()
        self.blocking = blocking
        self.calls = 0

    def __enter__(self) -> Held:
        def held(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            self.reached.set()
            if self.blocking:
                self.gate.wait(timeout=300)
            elif not self.gate.is_set():
                return []  # take(): nothing to grade yet
            return self.original(*args, **kwargs)
        setattr(self.inbox, self.name, held)
        return self

    def release(self) -> None:
        self.gate.set()

    def __exit__(self, *exc: object) -> None:
        self.gate.set()
        delattr(self.inbox, self.name)  # the class's method again


def test_chromium_sends_an_upload_once_with_the_button_off_meanwhile(chromium: WebDriver, demo: Served):
    wait = launch_demo(chromium, demo, "button")
    chromium.find_element(By.ID, "files").send_keys(str(EXAMPLES / "rahim.zip"))
    button = chromium.find_element(By.ID, "submit")
    with Held(demo, "accept") as held:
        button.click()
        assert held.reached.wait(timeout=60), "the upload did not reach the server"
        assert button.get_attribute("disabled") is not None and not button.is_enabled()
        shot(chromium, "5-sending")
        chromium.execute_script("document.getElementById('upload').requestSubmit()")  # a second send
        button.click()
        held.release()
        wait.until(until.element_to_be_clickable((By.ID, "submit")))
    wait.until(until.visibility_of_element_located((By.ID, "score")))
    assert held.calls == 1  # the page sent one upload (the server would also take a second as the first)
    assert len(demo.state.inbox.of_student("nn_module", "demo-button")) == 1


def test_chromium_lists_a_first_upload_without_a_reload_and_its_name_stays_text(
        chromium: WebDriver, demo: Served, tmp_path: Path):
    wait = launch_demo(chromium, demo, "fresh")
    assert chromium.find_element(By.ID, "earlier-none").is_displayed()
    assert not chromium.find_element(By.ID, "earlier").is_displayed()
    name = "<img src=x onerror=window.__pwned=1>.zip"
    hostile = tmp_path / name
    with zipfile.ZipFile(hostile, "w") as archive:
        with zipfile.ZipFile(EXAMPLES / "maya.zip") as source:
            for info in source.infolist():
                if info.filename.endswith("tinynet.py"):
                    archive.writestr("tinynet.py", source.read(info))
    chromium.find_element(By.ID, "files").send_keys(str(hostile))
    chromium.find_element(By.ID, "submit").click()
    wait.until(until.visibility_of_element_located((By.ID, "score")))
    row = wait.until(until.presence_of_element_located((By.CSS_SELECTOR, GRADED_ROW)))
    assert not chromium.find_element(By.ID, "earlier-none").is_displayed()
    assert chromium.find_element(By.ID, "earlier").is_displayed()
    [stored] = demo.state.inbox.of_student("nn_module", "demo-fresh")
    assert row.find_element(By.CSS_SELECTOR, ".file").text == name  # text, not an element
    assert f"{stored.score:g}" in row.find_element(By.CSS_SELECTOR, ".status").text
    assert chromium.find_elements(By.CSS_SELECTOR, "#earlier img") == []
    assert chromium.execute_script("return window.__pwned") is None
    when = row.find_element(By.CSS_SELECTOR, "time")
    assert when.text and when.text != when.get_attribute("datetime")  # written by the browser
    shot(chromium, "6-listed-without-reload")


def test_chromium_says_when_the_connection_is_lost_and_goes_on_when_it_is_back(
        chromium: WebDriver, demo: Served, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(student_pages, "LONG_POLL", 1.0)  # the page asks again within a second
    wait = launch_demo(chromium, demo, "offline")
    chromium.find_element(By.ID, "files").send_keys(str(EXAMPLES / "tanvir.zip"))
    with Held(demo, "take", blocking=False) as held:  # nothing is graded until the connection is back
        chromium.find_element(By.ID, "submit").click()
        wait.until(until.text_to_be_present_in_element((By.ID, "progress"), "waiting for a grader"))
        chromium.set_network_conditions(offline=True, **NETWORK)
        lost = wait.until(until.visibility_of_element_located((By.ID, "connection")))
        assert "connection to the server is lost" in lost.text
        shot(chromium, "7-connection-lost")
        chromium.set_network_conditions(offline=False, **NETWORK)
        held.release()
        demo.state.queue.wake()
        wait.until(until.visibility_of_element_located((By.ID, "score")))
    wait.until(until.invisibility_of_element_located((By.ID, "connection")))
    [stored] = demo.state.inbox.of_student("nn_module", "demo-offline")
    assert float(chromium.find_element(By.ID, "score").text) == stored.score


def test_chromium_writes_times_in_the_launchs_locale_and_its_own_zone_and_draws_bangla(
        demo: Served, tmp_path: Path):
    dhaka = ZoneInfo("Asia/Dhaka")
    chromium = start_chromium(tmp_path, env={"TZ": "Asia/Dhaka"})
    try:
        wait = launch_demo(chromium, demo, "zone", locale="en-GB")
        chromium.find_element(By.ID, "files").send_keys(str(EXAMPLES / "maya.zip"))
        chromium.find_element(By.ID, "submit").click()
        wait.until(until.presence_of_element_located((By.CSS_SELECTOR, GRADED_ROW)))
        [stored] = demo.state.inbox.of_student("nn_module", "demo-zone")
        text = chromium.find_element(By.CSS_SELECTOR, f"{GRADED_ROW} time").text
        received = datetime.fromisoformat(stored.received_at).astimezone(dhaka)
        shown = datetime.strptime(re.sub(r"\s+", " ", text), "%d %b %Y, %H:%M:%S")
        assert shown == received.replace(tzinfo=None, microsecond=0), (text, received)
        assert "Asia/Dhaka" in chromium.find_element(By.ID, "time-zone").text

        wait = launch_demo(chromium, demo, "zone", lang="bn", locale="bn-BD")  # the same student, in Bangla
        def bangla_time(driver: WebDriver) -> str | None:
            text = driver.find_element(By.CSS_SELECTOR, "#earlier time").text
            return text if re.search("[০-৯]", text) else None

        written = wait.until(bangla_time)
        digits = "".join("০১২৩৪৫৬৭৮৯"[int(d)] if d.isdigit() else d for d in f"{received:%M}:{received:%S}")
        assert digits in written and not re.search(r"[0-9]", written), written
        loaded = chromium.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "document.fonts.ready.then(() => done([...document.fonts].filter("
            "f => f.family.includes('Kit Noto Sans Bengali')).map(f => f.status)));")
        # the page's own Bengali faces (regular, and bold for headings), not the machine's
        assert loaded and set(loaded) == {"loaded"}, loaded
        for control in ("submit", "files"):  # controls do not inherit the page's font unless told
            family = chromium.execute_script(f"return getComputedStyle(document.getElementById('{control}'))"
                                             ".fontFamily")
            assert family.startswith('"Kit Noto Sans Bengali"'), (control, family)
        text = chromium.find_element(By.TAG_NAME, "body").text
        for line in filter(None, (ln.strip() for ln in text.splitlines())):  # one language: Bangla
            latin = re.sub(DATA_WORDS, "", line)
            if re.search("[A-Za-z]{3,}", latin):
                assert re.search("[\u0980-\u09ff]", line), line
        shot(chromium, "8-bangla")
    finally:
        chromium.quit()
