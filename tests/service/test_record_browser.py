"""Headless Chromium on the instructor's workflow pages of `serve --demo`: the class table searched and
sorted by its script with the CSV link following (the file holds the rows shown, in their order), a
student's page with its files opened in the page, its feedback switched between English and Bangla
in its frame, an adjustment made from its form; and a regrade request written on the student's page
and read on the instructor's. Screenshots are kept under test-artifacts/service/ (gitignored)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import Browser
from conftest import sandbox_works
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support import expected_conditions as until
from selenium.webdriver.support.ui import Select, WebDriverWait
from served import Served, example, serving, upload, wait_graded
from test_browser import shot, start_chromium

from autograder.config import Kit
from autograder.service.settings import Limits, ServiceSettings

STUDENTS = {"rima": "maya.zip", "rafi": "ayesha.zip", "nila": "rahim.zip"}
REASON = "<b>bonus</b> for the tidy code"
REQUEST = "<i>dropout</i> looks right to me"


@pytest.fixture(scope="module")
def demo(kit: Kit, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The demo server with three students graded (each through their own demo launch)."""
    data = tmp_path_factory.mktemp("record-demo") / "data"
    settings = ServiceSettings(kit, data, demo=True, sandbox=sandbox_works(kit),
                               limits=Limits(uploads_per_minute=50))
    with serving(settings) as served:
        sent = []
        for name, archive in STUDENTS.items():
            browser = Browser()
            browser.get(f"{served.url}/demo/student?as={name}")
            answer = upload(browser, served.url, [example(archive)])
            assert answer.status_code == 202, answer.text
            sent.append((browser, answer.json()["status_url"]))
        for browser, status_url in sent:
            assert wait_graded(browser, served.url, status_url, timeout=300)["status"] == "graded"
        yield served


@pytest.fixture
def chromium(tmp_path: Path) -> Iterator[WebDriver]:
    driver = start_chromium(tmp_path)
    try:
        yield driver
    finally:
        driver.quit()


def visible_rows(driver: WebDriver) -> list[tuple[str, str]]:
    """(student, score) of each row the table shows, in its order."""
    rows = driver.find_elements(By.CSS_SELECTOR, "#students tbody tr")
    return [(r.get_attribute("data-student") or "", r.find_element(By.CSS_SELECTOR, "td.score b").text)
            for r in rows if r.is_displayed()]


def csv_of(demo: Served, href: str) -> list[tuple[str, str]]:
    teacher = Browser()
    teacher.get(f"{demo.url}/demo/instructor")
    answer = teacher.get(href)
    assert answer.status_code == 200
    lines = list(csv.reader(io.StringIO(answer.content.decode("utf-8-sig"))))[1:]
    return [(line[0], line[2]) for line in lines]


def test_chromium_searches_and_sorts_the_class_table_and_the_csv_follows(chromium: WebDriver, demo: Served):
    chromium.get(f"{demo.url}/demo/instructor")
    wait = WebDriverWait(chromium, 60)
    wait.until(until.presence_of_element_located((By.ID, "students")))
    everyone = visible_rows(chromium)
    assert sorted(s for s, _ in everyone) == sorted(f"demo-{n}" for n in STUDENTS) == [s for s, _ in everyone]
    chromium.find_element(By.ID, "table-search").send_keys("RI")  # any case: demo-rima
    wait.until(lambda d: len(visible_rows(d)) < len(everyone))
    shown = visible_rows(chromium)
    assert [s for s, _ in shown] == ["demo-rima"]
    link = chromium.find_element(By.ID, "csv-link").get_attribute("href") or ""
    assert "q=RI" in link and csv_of(demo, link) == shown
    chromium.find_element(By.ID, "table-search").clear()
    chromium.find_element(By.ID, "table-search").send_keys("demo")
    score_header = chromium.find_element(By.CSS_SELECTOR, 'a.sort[data-sort="score"]')
    score_header.click()
    header = chromium.find_element(By.CSS_SELECTOR, 'th[data-column="score"]')
    assert header.get_attribute("aria-sort") == "ascending"
    ascending = visible_rows(chromium)
    assert [float(s) for _, s in ascending] == sorted(float(s) for _, s in ascending) and len(ascending) == 3
    score_header.click()
    assert header.get_attribute("aria-sort") == "descending"
    descending = visible_rows(chromium)
    assert descending == sorted(ascending, key=lambda row: (float(row[1]), row[0]), reverse=True)
    link = chromium.find_element(By.ID, "csv-link").get_attribute("href") or ""
    assert "sort=score" in link and "dir=desc" in link and csv_of(demo, link) == descending
    times = chromium.find_elements(By.CSS_SELECTOR, "#students time[datetime]")
    assert times and all(t.get_attribute("title") for t in times)  # the page's script ran under the CSP
    shot(chromium, "5-class-table")


def test_chromium_reads_a_students_page_switches_the_feedback_language_and_adjusts(chromium: WebDriver,
                                                                                   demo: Served):
    chromium.get(f"{demo.url}/demo/instructor")
    wait = WebDriverWait(chromium, 60)
    wait.until(until.element_to_be_clickable((By.LINK_TEXT, "demo-rafi"))).click()
    wait.until(until.presence_of_element_located((By.ID, "record-title")))
    assert "demo-rafi" in chromium.find_element(By.ID, "record-title").text
    details = chromium.find_element(By.CSS_SELECTOR, "details.upload-file")
    assert not details.find_element(By.TAG_NAME, "pre").is_displayed()
    details.find_element(By.TAG_NAME, "summary").click()
    assert details.find_element(By.TAG_NAME, "pre").is_displayed()
    for lang in ("bn", "en"):
        chromium.find_element(By.CSS_SELECTOR, f"a.feedback-{lang}").click()
        wait.until(until.frame_to_be_available_and_switch_to_it((By.ID, "feedback")))
        wait.until(lambda d, lang=lang: d.find_element(By.TAG_NAME, "html").get_attribute("lang") == lang)
        assert chromium.find_elements(By.ID, "total")
        chromium.switch_to.default_content()
    shot(chromium, "6-student-record")
    before = float(chromium.find_element(By.CSS_SELECTOR, "#standing-score b.score").text)
    Select(chromium.find_element(By.ID, "adjust-scope")).select_by_value("total")
    chromium.find_element(By.ID, "adjust-points").send_keys("-1.5")
    chromium.find_element(By.ID, "adjust-reason").send_keys(REASON)
    chromium.find_element(By.ID, "adjust-save").click()
    flash = wait.until(until.presence_of_element_located((By.ID, "flash")))
    assert "-1.5" in flash.text
    assert float(chromium.find_element(By.CSS_SELECTOR, "#standing-score b.score").text) == before - 1.5
    assert chromium.find_element(By.CSS_SELECTOR, "#adjustment-list td.reason").text == REASON  # as text


def test_chromium_a_regrade_request_is_seen_on_both_sides(chromium: WebDriver, demo: Served):
    chromium.get(f"{demo.url}/demo/student?as=nila")
    wait = WebDriverWait(chromium, 60)
    wait.until(until.presence_of_element_located((By.ID, "regrade-form")))
    chromium.find_element(By.ID, "regrade-text").send_keys(REQUEST)
    chromium.find_element(By.ID, "regrade-send").click()
    message = wait.until(until.presence_of_element_located((By.CSS_SELECTOR, "#thread-list .student .text")))
    assert message.text == REQUEST
    shot(chromium, "7-regrade-request")
    chromium.get(f"{demo.url}/demo/instructor")
    wait.until(until.element_to_be_clickable((By.CSS_SELECTOR, "#open-requests a"))).click()
    message = wait.until(until.presence_of_element_located((By.CSS_SELECTOR, "#thread-list .student .text")))
    assert message.text == REQUEST
    chromium.find_element(By.ID, "answer-text").send_keys("Agreed, see the adjustment.")
    Select(chromium.find_element(By.ID, "answer-scope")).select_by_value("task:dropout")
    chromium.find_element(By.ID, "answer-points").send_keys("1")
    chromium.find_element(By.ID, "answer-save").click()
    wait.until(until.presence_of_element_located((By.CSS_SELECTOR, "#thread-list .instructor .text")))
    chromium.get(f"{demo.url}/demo/student?as=nila")
    answer = wait.until(until.presence_of_element_located(
        (By.CSS_SELECTOR, "#thread-list .instructor .text")))
    assert answer.text == "Agreed, see the adjustment."
    notes = chromium.find_element(By.ID, "adjustment-notes").text
    assert "dropout" in notes and "Agreed, see the adjustment." in notes
    shot(chromium, "8-regrade-answered")
