"""Headless Chromium (Debian's, through Selenium and chromedriver) drives the student page of `serve --demo`:
it uploads a zip, waits, reads the score and a failing check's feedback. Screenshots are kept under
test-artifacts/service/ (gitignored)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT, sandbox_works
from served import EXAMPLES, Served, serving

from autograder.config import Kit
from autograder.service.settings import ServiceSettings

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
ARTIFACTS = ROOT / "test-artifacts" / "service"
if CHROMIUM is None or CHROMEDRIVER is None:
    pytest.fail("chromium and chromedriver are needed: run AUTOGRADER_BROWSER=1 scripts/setup",
                pytrace=False)

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support import expected_conditions as until  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


@pytest.fixture
def chromium(tmp_path: Path) -> Iterator[WebDriver]:
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                 f"--user-data-dir={tempfile.mkdtemp(dir=tmp_path)}", "--window-size=1200,1600"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
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
    graded = len(demo.state.inbox.latest_graded("nn_module"))
    wait.until(until.frame_to_be_available_and_switch_to_it((By.ID, "report")))
    students = wait.until(until.presence_of_element_located((By.ID, "students")))
    assert int(students.text) == graded
    chromium.switch_to.default_content()
    shot(chromium, "4-instructor")
